// Progress of `deltacpp write` on a terminal.
#pragma once

#include <functional>

#include "deltacpp/ops/write.h"

namespace deltacpp::cli {

/// A WriteOptions::on_progress that redraws one stderr line (rows, bytes, files) when stderr is
/// a terminal; an empty function (no progress at all) when it is not, e.g. when piped.
std::function<void(const WriteProgress&)> TerminalWriteProgress();

/// The progress line for `p`, without the leading carriage return.
std::string FormatWriteProgress(const WriteProgress& p);

}  // namespace deltacpp::cli
