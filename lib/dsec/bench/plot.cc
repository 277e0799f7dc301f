#include "dsec/bench/plot.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "dsec/bench/spawn.h"
#include "dsec/sys/fs.h"

namespace dsec::bench {

namespace {

// gnuplot strings are single-quoted; a quote inside is doubled.
std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
}

}  // namespace

Series cdf(const std::string& title, std::vector<double> samples) {
    std::sort(samples.begin(), samples.end());
    Series s{title, {}};
    for (size_t i = 0; i < samples.size(); i++)
        s.points.push_back({samples[i], double(i + 1) / double(samples.size())});
    return s;
}

std::string gnuplot_script(const std::vector<Panel>& panels, const std::string& data_dir, const std::string& svg) {
    std::ostringstream g;
    int width = 560 * int(std::max<size_t>(panels.size(), 1));
    g << "set terminal svg size " << width << ",420 dynamic noenhanced font 'sans,11' background '#ffffff'\n"
      << "set output " << quote(svg) << "\n"
      << "set grid\nset key left top\n"
      << "set multiplot layout 1," << panels.size() << "\n";
    for (size_t p = 0; p < panels.size(); p++) {
        auto& panel = panels[p];
        g << "set title " << quote(panel.title) << "\n"
          << "set xlabel " << quote(panel.xlabel) << "\n"
          << "set ylabel " << quote(panel.ylabel) << "\n"
          << (panel.logx ? "set logscale x\n" : "unset logscale x\n");
        g << "plot ";
        for (size_t i = 0; i < panel.series.size(); i++) {
            if (i) g << ", ";
            g << quote(data_dir + "/" + std::to_string(p) + "-" + std::to_string(i) + ".dat") << " using 1:2 with "
              << (panel.points ? "linespoints" : "steps") << " lw 2 title " << quote(panel.series[i].title);
        }
        if (panel.series.empty()) g << "NaN notitle";
        g << "\n";
    }
    g << "unset multiplot\n";
    return g.str();
}

Status plot_svg(const std::vector<Panel>& panels, const std::string& svg) {
    if (find_tool("gnuplot").empty())
        return fail(make_error(Code::not_found, "gnuplot is not installed (Debian: gnuplot-nox)", "gnuplot"));
    const char* tmp = std::getenv("TMPDIR");
    auto dir = fs::TempDir::make(tmp && *tmp ? tmp : "/tmp", "dsec-plot.");
    if (!dir) return fail(dir.error());
    for (size_t p = 0; p < panels.size(); p++) {
        for (size_t i = 0; i < panels[p].series.size(); i++) {
            std::ostringstream data;
            data.precision(10);
            for (auto& [x, y] : panels[p].series[i].points) data << x << " " << y << "\n";
            // gnuplot refuses an empty data file; one NaN row draws nothing.
            if (panels[p].series[i].points.empty()) data << "NaN NaN\n";
            std::string file = dir->path() + "/" + std::to_string(p) + "-" + std::to_string(i) + ".dat";
            if (auto r = fs::atomic_write(file, data.str()); !r) return r;
        }
    }
    std::string script = dir->path() + "/plot.gp";
    if (auto r = fs::atomic_write(script, gnuplot_script(panels, dir->path(), svg)); !r) return r;
    auto ran = spawn_checked({"gnuplot", script});
    if (!ran) return fail(std::move(ran.error()).context("plotting " + svg));
    return {};
}

}  // namespace dsec::bench
