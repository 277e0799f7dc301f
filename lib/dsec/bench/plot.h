// Drawing figures to SVG with gnuplot: the data and a script go to a temporary
// directory and gnuplot runs on them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "dsec/sys/error.h"

namespace dsec::bench {

/// One line on a plot.
struct Series {
    std::string title;
    std::vector<std::pair<double, double>> points;
};

/// One plot (several go side by side in one SVG).
struct Panel {
    std::string title;
    std::string xlabel;
    std::string ylabel;
    bool logx = false;
    bool points = false;  // draw markers as well as lines
    std::vector<Series> series;
};

/// The empirical CDF of `samples`: (value, fraction of samples <= value).
Series cdf(const std::string& title, std::vector<double> samples);

/// The gnuplot script that draws `panels` to `svg`, reading series i of panel p from
/// `data_dir`/p-i.dat. Exposed for tests.
std::string gnuplot_script(const std::vector<Panel>& panels, const std::string& data_dir, const std::string& svg);

/// Writes the data and script to a temporary directory and runs gnuplot.
/// Errors: not_found (no gnuplot: install gnuplot-nox), helper_failed.
Status plot_svg(const std::vector<Panel>& panels, const std::string& svg);

}  // namespace dsec::bench
