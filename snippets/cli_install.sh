git clone <repository-url> iteragpu && cd iteragpu
python -m pip install .
iteragpu --version
iteragpu examples run --all --lang ko
