// Sandbox ids, and the value parsers dsec-run's options use (dsec/sys/parse.h).
#pragma once

#include <string>

#include "dsec/sys/error.h"
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

/// A sandbox id: 1-64 of [A-Za-z0-9_.-], not starting with '.' or '-'. Errors: bad_input.
Status check_id(const std::string& id);

/// A fresh random id (12 hex digits).
std::string random_id();

}  // namespace dsec::sandbox
