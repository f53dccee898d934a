# mixed: hyphys bench integrate (modeled)
set terminal pngcairo noenhanced size 1200,460 font 'sans,9'
set output 'mixed.png'
set datafile separator ','
set key top left
set grid
set multiplot layout 1,3 title 'fem_independent on hermann4 (modeled): speedup over one CPU'
set xlabel 'CPUs'
set ylabel 'speedup'
set yrange [0:22]
set xtics 1
do for [p in 'ws priority lp'] {
  set title p
  plot for [g=0:4] 'mixed.csv' using ((strcol(3) eq p && $1 == g) ? $2 : 1/0):5 with linespoints lw 2 title sprintf('%d GPUs', g)
}
unset multiplot
