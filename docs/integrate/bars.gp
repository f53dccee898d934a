# bars: hyphys bench integrate (modeled)
set terminal pngcairo noenhanced size 720,460 font 'sans,9'
set output 'bars.png'
set datafile separator ','
set key top left
set grid
set title 'fem_bars on hermann4, 4 GPUs + 4 CPUs (modeled)'
set xlabel 'particles per block'
set ylabel 'ms per step'
set yrange [0:*]
plot for [p in 'round-robin static affinity priority lp'] 'bars.csv' using (strcol(2) eq p ? $1 : 1/0):3 with linespoints lw 2 title p
