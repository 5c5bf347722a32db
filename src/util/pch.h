// Precompiled header for the library: the heavy, stable third-party headers.
#pragma once
#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/filesystem/api.h>
#include <parquet/arrow/reader.h>
#include <string>
#include <vector>
#include <memory>
#include <optional>
