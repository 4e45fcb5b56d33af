git clone <alamat-repositori> iteragpu && cd iteragpu
python -m pip install .
iteragpu --version
iteragpu examples run --all --lang id
