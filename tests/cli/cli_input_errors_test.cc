// Runs the real `deltacpp` binary on bad input and failing destinations: a refused write names
// the file, column and line (as an editor counts lines) and leaves the table as it was; CSV
// headers are checked before any row is read; CSV text keeps its characters unless a type is
// given; I/O failures carry the path and the system's reason; a failed command leaves no
// output file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "deltacpp/api.h"
#include "ops/ops_test_util.h"
#include "support/cli_runner.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::Latest;
using testing::RunCli;
using testing::TempDir;

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class CliInputTest : public ::testing::Test {
 protected:
  void SetUp() override { table_ = dir_.str() + "/t"; }

  std::string File(const std::string& name, const std::string& text) {
    const std::string path = dir_.str() + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  void Create(const std::string& schema) {
    auto r = RunCli("create " + table_ + " --schema '" + schema + "'", dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // Runs a write that must be refused, checks the table is unchanged and returns stderr.
  std::string Refused(const std::string& args) {
    const auto before = testing::DirectoryTree(table_);
    auto r = RunCli("write " + table_ + " " + args, dir_);
    EXPECT_NE(r.exit_code, 0) << r.out;
    EXPECT_EQ(testing::DirectoryTree(table_), before) << r.err;
    return r.err;
  }

  std::string ReadCsv(const std::string& extra = "") {
    auto r = RunCli("read " + table_ + " --format csv " + extra, dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  TempDir dir_;
  std::string table_;
};

// --- values that do not convert: column, line, file ---

TEST_F(CliInputTest, CsvValueErrorNamesColumnLineAndFile) {
  Create("id long, name string, age int");
  const std::string csv = File("people.csv",
                               "id,name,age\n1,ann,30\n2,bob,41\n3,cid,52\n4,dan,63\n5,eve,74\n"
                               "7,gus,abc\n8,hal,9\n");
  const std::string err = Refused("--mode append " + csv);
  EXPECT_NE(err.find("cannot convert \"abc\" in column \"age\" at line 7 of " + csv +
                     " to integer"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("deltacpp: error: InvalidArgument: "), std::string::npos) << err;
}

TEST_F(CliInputTest, CsvLinesCountBlankLinesAndQuotedLineBreaks) {
  Create("id long, note string, n int");
  // line 1 header, 2 row, 3 blank, 4-6 one record whose note spans three lines, 7 blank,
  // 8 row with CR LF inside quotes spanning 8-9, 10 the bad row.
  const std::string csv = File("notes.csv",
                               "id,note,n\n"
                               "1,plain,1\n"
                               "\n"
                               "2,\"first\nsecond\nthird\",2\n"
                               "\n"
                               "3,\"a\r\nb\",3\n"
                               "4,last,x4\n");
  const std::string err = Refused("--mode append " + csv);
  EXPECT_NE(err.find("cannot convert \"x4\" in column \"n\" at line 10 of " + csv),
            std::string::npos)
      << err;
  // A value after a line break inside its own record is on a later line than the record.
  const std::string same = File("same.csv", "id,note,n\r\n1,\"a\r\nb\r\nc\",y\r\n");
  const std::string err2 = Refused("--mode append " + same);
  EXPECT_NE(err2.find("cannot convert \"y\" in column \"n\" at line 4 of " + same),
            std::string::npos)
      << err2;
}

TEST_F(CliInputTest, CsvQuoteNeverClosedIsRefused) {
  Create("id long, note string");
  // Without the check the rest of the input would be one value: 2 fields, a valid row.
  const std::string csv =
      File("open.csv", "id,note\n1,\"fine \"\"quoted\"\"\"\n2,5'11\"\n3,\"open\n4,x\n");
  const std::string err = Refused("--mode append " + csv);
  EXPECT_NE(err.find("the quote opened at line 4 of " + csv + " is never closed"),
            std::string::npos)
      << err;
}

TEST_F(CliInputTest, CsvLineNumbersRunOnAcrossReadBlocks) {
  Create("id long, v int");
  // About 3 MiB: Arrow reads 1 MiB blocks, so the bad value is in a later batch.
  std::string text = "id,v\n";
  const int bad_row = 150000;  // 0-based data row: line bad_row + 2
  for (int i = 0; i < 200000; ++i) {
    text += std::to_string(i) + "," + (i == bad_row ? std::string("1.5") : std::to_string(i)) +
            "\n";
  }
  const std::string csv = File("big.csv", text);
  const std::string err = Refused("--mode append " + csv);
  EXPECT_NE(err.find("cannot convert \"1.5\" in column \"v\" at line " +
                     std::to_string(bad_row + 2) + " of " + csv),
            std::string::npos)
      << err;
}

TEST_F(CliInputTest, CsvFromStdinIsNamedStdin) {
  Create("id long, at timestamp");
  const std::string csv = File("at.csv", "id,at\n1,2024-01-02T03:04:05Z\n2,yesterday\n");
  const std::string err = Refused("--mode append --input-format csv - < " + csv);
  EXPECT_NE(err.find("cannot convert \"yesterday\" in column \"at\" at line 3 of stdin to "
                     "timestamp"),
            std::string::npos)
      << err;
}

TEST_F(CliInputTest, CsvLineWithTheWrongNumberOfFields) {
  Create("id long, name string");
  const std::string csv = File("wide.csv", "id,name\n1,ann\n\n2,bob,extra\n");
  const std::string err = Refused("--mode append " + csv);
  EXPECT_NE(err.find("line 4 of " + csv + " has 3 fields but the header has 2"),
            std::string::npos)
      << err;
}

TEST_F(CliInputTest, JsonValueErrorNamesColumnLineAndFile) {
  Create("id long, d date");
  const std::string json = File("days.json",
                                "{\"id\": 1, \"d\": \"2024-01-02\"}\n"
                                "{\"id\": 2, \"d\": \"2024-01-03\"}\n"
                                "{\"id\": 3, \"d\": \"2024-13-45\"}\n");
  const std::string err = Refused("--mode append " + json);
  EXPECT_NE(err.find("cannot convert \"2024-13-45\" in column \"d\" at line 3 of " + json +
                     " to date"),
            std::string::npos)
      << err;
}

TEST_F(CliInputTest, JsonParseErrorNamesTheLineCountingBlankLines) {
  Create("id long");
  const std::string json = File("broken.json", "{\"id\": 1}\n\n\n{\"id\": 2\n{\"id\": 3}\n");
  const std::string err = Refused("--mode append " + json);
  EXPECT_NE(err.find("cannot read input " + json + " at line 4: JSON parse error: "),
            std::string::npos)
      << err;
  const std::string piped = Refused("--mode append --input-format json - < " + json);
  EXPECT_NE(piped.find("cannot read input stdin at line 4: "), std::string::npos) << piped;
}

TEST_F(CliInputTest, JsonLineNumbersRunOnAcrossReadBlocks) {
  Create("id long, d date");
  // About 6 MiB with a blank line every 1000 rows: the bad values are in later blocks.
  std::string text;
  int line = 0;
  int bad_date_line = 0;
  int bad_id_line = 0;
  for (int i = 0; i < 200000; ++i) {
    if (i % 1000 == 0) {
      text += "\n";
      ++line;
    }
    ++line;
    if (i == 150000) {
      text += "{\"id\": 1, \"d\": \"2024-02-30\"}\n";
      bad_date_line = line;
    } else if (i == 160000) {
      text += "{\"id\": \"x\"}\n";
      bad_id_line = line;
    } else {
      text += "{\"id\": " + std::to_string(i) + ", \"d\": \"2024-01-01\"}\n";
    }
  }
  const std::string json = File("big.json", text);
  std::string err = Refused("--mode append " + json);
  EXPECT_NE(err.find("cannot convert \"2024-02-30\" in column \"d\" at line " +
                     std::to_string(bad_date_line) + " of " + json + " to date"),
            std::string::npos)
      << err;
  // Without the bad date the bad id (a string where numbers were) is reported.
  const auto at = text.find("2024-02-30");
  text.replace(at, 10, "2024-02-03");
  File("big.json", text);
  err = Refused("--mode append " + json);
  EXPECT_NE(err.find("cannot read input " + json + " at line " + std::to_string(bad_id_line) +
                     ": JSON parse error: "),
            std::string::npos)
      << err;
}

// --- the header ---

TEST_F(CliInputTest, DuplicateHeaderNamesAreRefusedIgnoringCase) {
  const std::string csv = File("dup.csv", "id,name,ID\n1,ann,2\n");
  auto r = RunCli("write " + table_ + " " + csv, dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("the header (line 1) of " + csv + " names column \"id\" twice (\"id\" "
                       "and \"ID\": column names ignore case)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(table_)) << r.err;

  Create("id long, name string");
  const std::string exact = File("dup2.csv", "id,name,name\n1,ann,bob\n");
  const std::string err = Refused("--mode append " + exact);
  EXPECT_NE(err.find("names column \"name\" twice"), std::string::npos) << err;
}

TEST_F(CliInputTest, CsvWithoutHeaderIsDetectedAndReadWithNoHeader) {
  Create("id long, name string");
  const std::string csv = File("rows.csv", "1,ann\n2,bob\n");
  const std::string err = Refused("--mode append " + csv);
  EXPECT_NE(err.find("the first line of " + csv + " does not look like a header: \"1\" is a "
                     "value, not a column name"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("give --no-header to read its fields as the columns id, name in this order"),
            std::string::npos)
      << err;

  auto r = RunCli("write " + table_ + " --mode append --no-header " + csv, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadCsv(), "id,name\n1,ann\n2,bob\n");
}

TEST_F(CliInputTest, HeaderNamingNoTableColumnIsRefused) {
  Create("id long, name string");
  const std::string csv = File("names.csv", "ann,bob\ncid,dan\n");
  const std::string err = Refused("--mode append " + csv);
  EXPECT_NE(err.find("the header (line 1) of " + csv + " names none of the table's columns "
                     "(id, name)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("--no-header"), std::string::npos) << err;
}

TEST_F(CliInputTest, NoHeaderForANewTableNeedsSchema) {
  const std::string csv = File("rows.csv", "1,007\n2,+4412345\n");
  auto r = RunCli("write " + table_ + " --no-header " + csv, dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--no-header needs the columns of the input: give --schema"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(table_));

  r = RunCli("write " + table_ + " --no-header --schema 'id INT, code STRING' " + csv, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto schema = Latest(table_)->schema();
  ASSERT_EQ(schema->num_fields(), 2);
  EXPECT_TRUE(schema->field(0)->type()->Equals(arrow::int32()));
  EXPECT_TRUE(schema->field(1)->type()->Equals(arrow::utf8()));
  EXPECT_EQ(ReadCsv(), "id,code\n1,007\n2,+4412345\n");
}

TEST_F(CliInputTest, EmptyCsvIsRefused) {
  const std::string csv = File("empty.csv", "");
  auto r = RunCli("write " + table_ + " " + csv, dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("input " + csv + " is empty"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(table_));
}

TEST_F(CliInputTest, BadSecondFileRefusesTheWholeWrite) {
  Create("id long, name string");
  const std::string good = File("good.csv", "id,name\n1,ann\n");
  const std::string bad = File("bad.csv", "id,name,ID\n2,bob,3\n");
  const std::string err = Refused("--mode append " + good + " " + bad);
  EXPECT_NE(err.find("of " + bad + " names column \"id\" twice"), std::string::npos) << err;
}

// --- CSV text and declared types ---

TEST_F(CliInputTest, NewCsvColumnsKeepTheirText) {
  const std::string csv =
      File("contacts.csv", "id,phone,code,note\n1,+4412345,007,NA\n2,0123,,\"\"\n");
  auto r = RunCli("write " + table_ + " " + csv, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto schema = Latest(table_)->schema();
  for (const auto& f : schema->fields()) {
    EXPECT_TRUE(f->type()->Equals(arrow::utf8())) << f->ToString();
  }
  // An empty field is null and `""` an empty string, as `read --format csv` writes them.
  EXPECT_EQ(ReadCsv(), "id,phone,code,note\n1,+4412345,007,NA\n2,0123,,\"\"\n");
}

TEST_F(CliInputTest, DeclaredTypesApplyAndOthersStayText) {
  const std::string csv = File("c.csv", "id,phone,amount\n1,+4412345,12.50\n2,007, 3 \n");
  auto r = RunCli("write " + table_ + " --schema 'id INT, amount DECIMAL(10,2)' " + csv, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto schema = Latest(table_)->schema();
  EXPECT_TRUE(schema->GetFieldByName("id")->type()->Equals(arrow::int32()));
  EXPECT_TRUE(schema->GetFieldByName("phone")->type()->Equals(arrow::utf8()));
  EXPECT_TRUE(schema->GetFieldByName("amount")->type()->Equals(arrow::decimal128(10, 2)));
  EXPECT_EQ(ReadCsv(), "id,phone,amount\n1,+4412345,12.50\n2,007,3.00\n");
}

TEST_F(CliInputTest, ExistingTableTypesConvertAndMergedColumnsStayText) {
  Create("id long, phone string");
  const std::string csv = File("m.csv", "id,phone,zip\n7,+4412345,01234\n");
  auto r = RunCli("write " + table_ + " --mode append --merge-schema " + csv, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto schema = Latest(table_)->schema();
  EXPECT_TRUE(schema->GetFieldByName("id")->type()->Equals(arrow::int64()));
  EXPECT_TRUE(schema->GetFieldByName("zip")->type()->Equals(arrow::utf8()));
  EXPECT_EQ(ReadCsv(), "id,phone,zip\n7,+4412345,01234\n");
}

TEST_F(CliInputTest, DeclaredTypeThatContradictsTheTableIsRefused) {
  Create("id long, phone string");
  const std::string csv = File("x.csv", "id,phone\n1,2\n");
  const std::string err = Refused("--mode append --schema 'phone INT' " + csv);
  EXPECT_NE(err.find("--schema gives column \"phone\" the type integer, but the table has it "
                     "as string"),
            std::string::npos)
      << err;
}

TEST_F(CliInputTest, DeclaredColumnMissingFromTheHeaderIsRefused) {
  const std::string csv = File("c.csv", "id,phone\n1,+4412345\n");
  auto r = RunCli("write " + table_ + " --schema 'ID INT, phnoe STRING' " + csv, dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--schema names column \"phnoe\", which the header of " + csv +
                       " does not have (it has id, phone)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(table_));
}

TEST_F(CliInputTest, DeclaredTypesApplyToJson) {
  const std::string json = File("n.json", "{\"id\": 1, \"n\": 5, \"d\": \"2024-01-02\"}\n");
  auto r = RunCli("write " + table_ + " --schema 'n INT, d DATE' " + json, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto schema = Latest(table_)->schema();
  EXPECT_TRUE(schema->GetFieldByName("id")->type()->Equals(arrow::int64()));
  EXPECT_TRUE(schema->GetFieldByName("n")->type()->Equals(arrow::int32()));
  EXPECT_TRUE(schema->GetFieldByName("d")->type()->Equals(arrow::date32()));
}

TEST_F(CliInputTest, CsvOptionsAreRefusedForOtherFormats) {
  const std::string json = File("n.json", "{\"id\": 1}\n");
  auto r = RunCli("write " + table_ + " --no-header --schema 'id INT' " + json, dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--no-header applies to CSV input, not to json input " + json),
            std::string::npos)
      << r.err;
  r = RunCli("write " + table_ + " --schema 'id INT' --input-format parquet - < " + json, dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--schema applies to CSV and JSON input; Parquet input stdin carries its "
                       "own types"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(table_));
}

// --- Parquet from stdin ---

TEST_F(CliInputTest, ParquetFromStdin) {
  const std::string csv = File("src.csv", "id,name\n1,ann\n2,bob\n");
  const std::string source = dir_.str() + "/source";
  ASSERT_EQ(RunCli("write " + source + " --schema 'id LONG' " + csv, dir_).exit_code, 0);
  const std::string parquet = dir_.str() + "/rows.parquet";
  auto out = RunCli("read " + source + " --format parquet --output " + parquet, dir_);
  ASSERT_EQ(out.exit_code, 0) << out.err;

  auto r = RunCli("write " + table_ + " --input-format parquet - < " + parquet, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("committed version 0: 2 rows"), std::string::npos) << r.out;
  EXPECT_EQ(ReadCsv(), "id,name\n1,ann\n2,bob\n");

  const std::string garbage = File("garbage.parquet", "not parquet at all");
  const std::string err = Refused("--mode append --input-format parquet - < " + garbage);
  EXPECT_NE(err.find("cannot read input stdin: "), std::string::npos) << err;
}

// --- I/O failures ---

TEST_F(CliInputTest, MissingInputFile) {
  const std::string missing = dir_.str() + "/nope.csv";
  auto r = RunCli("write " + table_ + " " + missing, dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("deltacpp: error: IOError: cannot open input " + missing +
                       ": No such file or directory"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(table_));
}

TEST_F(CliInputTest, InputThatIsADirectory) {
  const std::string folder = dir_.str() + "/folder.csv";
  std::filesystem::create_directory(folder);
  auto r = RunCli("write " + table_ + " " + folder, dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("deltacpp: error: IOError: cannot read input " + folder +
                       ": Is a directory"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(table_));
}

TEST_F(CliInputTest, TablePathUnderARegularFile) {
  const std::string file = File("plain", "x");
  const std::string csv = File("rows.csv", "id\n1\n");
  for (const std::string& under : {file + "/t", file + "/a/b", file}) {
    const std::string expected = "deltacpp: error: IOError: cannot use " + under +
                                 " as a table path: " + file + ": Not a directory";
    auto w = RunCli("write " + under + " " + csv, dir_);
    EXPECT_NE(w.exit_code, 0);
    EXPECT_NE(w.err.find(expected), std::string::npos) << w.err;
    auto c = RunCli("create " + under + " --schema 'id long'", dir_);
    EXPECT_NE(c.exit_code, 0);
    EXPECT_NE(c.err.find(expected), std::string::npos) << c.err;
  }
  EXPECT_EQ(ReadText(file), "x");
}

// sysfs takes no new directories, whoever asks (root included): the system's reason is shown.
TEST_F(CliInputTest, TableDirectoryTheSystemRefuses) {
  const std::string csv = File("rows.csv", "id\n1\n");
  auto r = RunCli("write /sys/deltacpp-test-table " + csv, dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("deltacpp: error: IOError: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/sys/deltacpp-test-table"), std::string::npos) << r.err;
  const bool has_reason = r.err.find(": Operation not permitted") != std::string::npos ||
                          r.err.find(": Read-only file system") != std::string::npos ||
                          r.err.find(": Permission denied") != std::string::npos;
  EXPECT_TRUE(has_reason) << r.err;
}

// --- output files ---

class CliOutputTest : public CliInputTest {
 protected:
  void SetUp() override {
    CliInputTest::SetUp();
    out_dir_ = dir_.str() + "/out";
    std::filesystem::create_directory(out_dir_);
    const std::string csv = File("rows.csv", "id,name\n1,ann\n2,bob\n");
    auto r = RunCli("write " + table_ + " --schema 'id LONG' " + csv, dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // Removes the table's data files: a scan then fails when it reaches them.
  void LoseDataFiles() {
    for (const auto& e : std::filesystem::directory_iterator(table_)) {
      if (e.path().extension() == ".parquet") std::filesystem::remove(e.path());
    }
  }

  std::string out_dir_;
};

TEST_F(CliOutputTest, OutputInAMissingDirectory) {
  const std::string target = out_dir_ + "/missing/rows.csv";
  for (const char* command : {"read", "history", "files", "describe"}) {
    auto r = RunCli(std::string(command) + " " + table_ + " --format csv --output " + target,
                    dir_);
    EXPECT_NE(r.exit_code, 0) << command;
    EXPECT_NE(r.err.find("deltacpp: error: IOError: cannot write output " + target +
                         ": No such file or directory"),
              std::string::npos)
        << command << ": " << r.err;
  }
  EXPECT_TRUE(testing::DirectoryTree(out_dir_).empty());
}

TEST_F(CliOutputTest, OutputToAFullDevice) {
  auto r = RunCli("read " + table_ + " --format csv --output /dev/full", dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("deltacpp: error: IOError: cannot write output /dev/full: No space left "
                       "on device"),
            std::string::npos)
      << r.err;
}

TEST_F(CliOutputTest, OutputThatIsADirectory) {
  auto r = RunCli("read " + table_ + " --format csv --output " + out_dir_, dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("deltacpp: error: IOError: cannot write output " + out_dir_ + ": Is a "
                       "directory"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(testing::DirectoryTree(out_dir_).empty());
}

TEST_F(CliOutputTest, FailedReadLeavesNoOutputFile) {
  LoseDataFiles();
  const std::string target = out_dir_ + "/rows.csv";
  for (const char* format : {"csv", "json", "parquet", "table"}) {
    auto r = RunCli("read " + table_ + " --format " + format + " --output " + target, dir_);
    EXPECT_NE(r.exit_code, 0) << format;
    EXPECT_NE(r.err.find("deltacpp: error: "), std::string::npos) << r.err;
    EXPECT_TRUE(testing::DirectoryTree(out_dir_).empty()) << format;
  }
}

TEST_F(CliOutputTest, FailedReadLeavesAnExistingOutputFileUntouched) {
  const std::string target = File("out/rows.csv", "previous contents\n");
  LoseDataFiles();
  auto r = RunCli("read " + table_ + " --format csv --output " + target, dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(ReadText(target), "previous contents\n");
  EXPECT_EQ(testing::DirectoryTree(out_dir_).size(), 1u);
}

TEST_F(CliOutputTest, SuccessfulReadReplacesTheOutputFile) {
  const std::string target = File("out/rows.csv", "previous contents\n");
  auto r = RunCli("read " + table_ + " --format csv --output " + target, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadText(target), "id,name\n1,ann\n2,bob\n");
  EXPECT_EQ(testing::DirectoryTree(out_dir_).size(), 1u);
  // A device is written as it is, not replaced.
  auto null = RunCli("read " + table_ + " --format csv --output /dev/null", dir_);
  EXPECT_EQ(null.exit_code, 0) << null.err;
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
}

}  // namespace
}  // namespace deltacpp
