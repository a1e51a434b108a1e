/* oracle_table.h — the reader of PyTorch's oracle tables, the CSV files of tests/data/
 * (what they hold and how they are made: tests/data/README.md), for the suites that check
 * pith against them. A table that is missing, empty or ragged fails the test that reads
 * it, naming the file: a test must never pass by checking zero rows. */
#ifndef PITH_TESTS_COMMON_ORACLE_TABLE_H
#define PITH_TESTS_COMMON_ORACLE_TABLE_H

#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace pith_test {

struct OracleTable {
    std::string path;
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows; /* each as wide as the header */

    /* The index of the column named `name` (the header's width, which no row has, if the
     * table lacks it: row.at() then throws, and GoogleTest reports the test as failed). */
    size_t column(const std::string &name) const
    {
        for (size_t i = 0; i < header.size(); i++)
            if (header[i] == name)
                return i;
        ADD_FAILURE() << path << " has no column " << name;
        return header.size();
    }
};

/* The rows of tests/data/<name>, after its header line. */
inline OracleTable ReadOracleTable(const std::string &name)
{
    OracleTable table;
    table.path = std::string(PITH_TEST_DATA_DIR) + "/" + name;
    std::ifstream in(table.path);
    if (!in) {
        ADD_FAILURE() << "cannot open the oracle table " << table.path
                      << " (regenerate it with scripts/gen_oracle_tables.py)";
        return table;
    }
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') /* the csv module's CRLF line ends */
            line.pop_back();
        if (line.empty())
            continue;
        std::vector<std::string> cells;
        std::stringstream ss(line);
        std::string cell;
        while (std::getline(ss, cell, ','))
            cells.push_back(cell);
        if (table.header.empty()) {
            table.header = cells;
        } else if (cells.size() != table.header.size()) {
            ADD_FAILURE() << table.path << ": the row \"" << line << "\" has " << cells.size()
                          << " cells, the header " << table.header.size();
        } else {
            table.rows.push_back(cells);
        }
    }
    if (table.rows.empty())
        ADD_FAILURE() << "the oracle table " << table.path << " has no rows";
    return table;
}

}  // namespace pith_test

#endif
