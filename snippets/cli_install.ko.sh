git clone <저장소-주소> iteragpu && cd iteragpu
python -m pip install .
iteragpu --version
iteragpu examples run --all --lang ko
