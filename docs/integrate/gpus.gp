# gpus: hyphys bench integrate (modeled)
set terminal pngcairo noenhanced size 720,460 font 'sans,9'
set output 'gpus.png'
set datafile separator ','
set key top left
set grid
set title 'fem64 on hermann8 (modeled): speedup over one GPU'
set xlabel 'GPUs'
set ylabel 'speedup'
set logscale x 2
set xrange [0.9:9]
set xtics (1,2,4,8)
set yrange [0:*]
plot for [p in 'round-robin static ws affinity priority lp'] 'gpus.csv' using (strcol(2) eq p ? $1 : 1/0):4 with linespoints lw 2 title p, x with lines dt 2 lc 'gray' title 'linear'
