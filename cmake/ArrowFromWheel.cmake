# Locates Arrow C++ / Parquet C++ inside the pinned pyarrow wheel in .venv and defines imported
# targets deltacpp::arrow, ::parquet, ::arrow_compute, ::arrow_acero, ::arrow_dataset.
# The wheel ships headers and shared libraries but no CMake package, so this is the one place
# that knows where they are.
set(DELTACPP_PYTHON "${PROJECT_SOURCE_DIR}/.venv/bin/python" CACHE FILEPATH "Python of the project venv")
if(NOT EXISTS "${DELTACPP_PYTHON}")
  message(FATAL_ERROR "No ${DELTACPP_PYTHON}: run scripts/setup.sh (make does this) first")
endif()
execute_process(
  COMMAND "${DELTACPP_PYTHON}" -c "import pyarrow as pa; print(pa.__version__); print(pa.get_include()); print(pa.get_library_dirs()[0])"
  OUTPUT_VARIABLE _pa_out RESULT_VARIABLE _pa_rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _pa_rc EQUAL 0)
  message(FATAL_ERROR "pyarrow is not importable from ${DELTACPP_PYTHON}")
endif()
string(REPLACE "\n" ";" _pa_lines "${_pa_out}")
list(GET _pa_lines 0 PYARROW_VERSION)
list(GET _pa_lines 1 PYARROW_INCLUDE_DIR)
list(GET _pa_lines 2 PYARROW_LIB_DIR)
if(NOT PYARROW_VERSION VERSION_EQUAL "26.0.1")
  message(FATAL_ERROR "pyarrow ${PYARROW_VERSION} found, 26.0.1 is pinned (constraints.txt)")
endif()
message(STATUS "Arrow C++ from pyarrow ${PYARROW_VERSION}: ${PYARROW_LIB_DIR}")

# The wheel is built with the C++11 std::string ABI (checked: libarrow exports std::__cxx11
# symbols). Fail loudly if a future wheel changes that, rather than crash at run time.
execute_process(COMMAND sh -c "nm -D --defined-only '${PYARROW_LIB_DIR}/libarrow.so' | grep -c __cxx11"
  OUTPUT_VARIABLE _cxx11_count OUTPUT_STRIP_TRAILING_WHITESPACE)
if(_cxx11_count EQUAL 0)
  message(FATAL_ERROR "libarrow.so in the wheel does not use the C++11 string ABI; set _GLIBCXX_USE_CXX11_ABI=0")
endif()

foreach(_lib arrow parquet arrow_compute arrow_acero arrow_dataset)
  if(NOT EXISTS "${PYARROW_LIB_DIR}/lib${_lib}.so")
    message(FATAL_ERROR "${PYARROW_LIB_DIR}/lib${_lib}.so missing: run pyarrow.create_library_symlinks() (scripts/setup.sh)")
  endif()
  add_library(deltacpp::${_lib} SHARED IMPORTED GLOBAL)
  set_target_properties(deltacpp::${_lib} PROPERTIES
    IMPORTED_LOCATION "${PYARROW_LIB_DIR}/lib${_lib}.so"
    IMPORTED_NO_SONAME FALSE)
  # SYSTEM keeps our -Wall -Wextra quiet about Arrow's headers.
  target_include_directories(deltacpp::${_lib} SYSTEM INTERFACE "${PYARROW_INCLUDE_DIR}")
endforeach()
set_property(TARGET deltacpp::parquet APPEND PROPERTY INTERFACE_LINK_LIBRARIES deltacpp::arrow)
set_property(TARGET deltacpp::arrow_compute APPEND PROPERTY INTERFACE_LINK_LIBRARIES deltacpp::arrow)
set_property(TARGET deltacpp::arrow_acero APPEND PROPERTY INTERFACE_LINK_LIBRARIES deltacpp::arrow_compute)
set_property(TARGET deltacpp::arrow_dataset APPEND PROPERTY INTERFACE_LINK_LIBRARIES deltacpp::arrow_acero deltacpp::parquet)

# Binaries find the wheel's libraries without LD_LIBRARY_PATH.
set(CMAKE_BUILD_RPATH "${PYARROW_LIB_DIR}")
set(CMAKE_INSTALL_RPATH "${PYARROW_LIB_DIR}")
