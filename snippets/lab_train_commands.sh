python mesure_memoire.py predict --task train --batch 1 --context 16 --width 64 --optimizer adamw --precision fp32
python mesure_memoire.py measure --task train --device cuda:0 --batch 1 --context 16 --width 64 --optimizer adamw --precision fp32 --steps 3 --output train.json
