// Sandbox ids (dsec/sys/id.h), and the value parsers dsec-run's options use (dsec/sys/parse.h).
#pragma once

#include <string>

#include "dsec/sys/error.h"
#include "dsec/sys/id.h"
#include "dsec/sys/parse.h"

namespace dsec::sandbox {

using parse::check_env;
using parse::format_duration_ms;
using parse::parse_count;
using parse::parse_cpus;
using parse::parse_duration_ms;
using parse::parse_size;
using parse::parse_user;
using parse::User;

using dsec::check_id;

}  // namespace dsec::sandbox
