/* core_test.h — the fixture and helpers of the core tests (from common/pith_test.h). */
#ifndef PITH_TESTS_CORE_TEST_H
#define PITH_TESTS_CORE_TEST_H

#include <gtest/gtest.h>

#include "common/pith_test.h"
#include "core_shim.h"
#include "pith/interpreter.h"
#include "pith/pith.h"

using pith_test::HasError;
using pith_test::kAllDtypes;
using pith_test::Tensor;

/* Every test starts with no error and ends with as many live tensors as it started with. */
using CoreTest = pith_test::LiveTensorFixture;

#endif
