// Process identity: whether a pid still is the process recorded (its start time, as
// sandbox states, sessions and snapshot marks keep it), read from /proc/<pid>/stat; and
// single fields of the kernel's "Name:<tab>value" files.
#pragma once

#include <optional>
#include <string_view>

namespace dsec::proc {

/// The fields of /proc/<pid>/stat that dsec reads.
struct Stat {
    char state = 0;                // field 3: R, S, D, Z, X, ...
    int ppid = 0;                  // field 4
    int pgrp = 0;                  // field 5
    int session = 0;               // field 6: the session id in the reader's pid namespace
    unsigned long long start = 0;  // field 22: start time, clock ticks since boot
};

/// Parses the text of /proc/<pid>/stat. The command name (field 2) may hold spaces and
/// parentheses: fields are counted from its last ')'. nullopt when the text is cut short.
std::optional<Stat> parse_stat(std::string_view text);

/// /proc/<pid>/stat of `pid`, parsed; nullopt when the process is gone.
std::optional<Stat> read_stat(int pid);

/// True when the process `pid` exists, is not a zombie and, if `start` is non-zero,
/// started at `start` (clock ticks since boot, as /proc/<pid>/stat says).
bool process_alive(int pid, unsigned long long start);

/// The start time of `pid` from /proc/<pid>/stat, or 0 when it is gone.
unsigned long long process_start(int pid);

/// Field 6 of /proc/<pid>/stat: the session id in the host's pid namespace; 0 when gone.
int session_of(int pid);

/// The value of the line `name`: in a text of "Name:<blanks>value" lines (/proc/<pid>/status,
/// /proc/<pid>/fdinfo/<fd>, smaps_rollup), with the blanks around it dropped; nullopt
/// when no line has that name. `name` is without its colon.
std::optional<std::string_view> status_field(std::string_view text, std::string_view name);

}  // namespace dsec::proc
