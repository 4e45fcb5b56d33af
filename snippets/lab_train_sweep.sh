python mesure_memoire.py measure --task train --device cuda:0 --batch 1 --context 128 --width 1024 --steps 3 --output sweep-b1.json
python mesure_memoire.py measure --task train --device cuda:0 --batch 2 --context 128 --width 1024 --steps 3 --output sweep-b2.json
python mesure_memoire.py measure --task train --device cuda:0 --batch 4 --context 128 --width 1024 --steps 3 --output sweep-b4.json
python mesure_memoire.py measure --task train --device cuda:0 --batch 8 --context 128 --width 1024 --steps 3 --output sweep-b8.json
iteragpu report sweep-b1.json sweep-b2.json sweep-b4.json sweep-b8.json
