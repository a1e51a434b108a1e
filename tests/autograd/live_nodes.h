/* live_nodes.h — the fixture of the autograd suites: every test ends with as many live
 * tensors and nodes as it began with. */
#ifndef PITH_TESTS_AUTOGRAD_LIVE_NODES_H
#define PITH_TESTS_AUTOGRAD_LIVE_NODES_H

#include "common/pith_test.h"
#include "pith/autograd.h"

class LiveNodesFixture : public pith_test::LiveTensorFixture {
protected:
    size_t nodes_before_ = 0;
    void SetUp() override
    {
        LiveTensorFixture::SetUp();
        nodes_before_ = pith_live_nodes();
    }
    void TearDown() override
    {
        EXPECT_EQ(pith_live_nodes(), nodes_before_);
        LiveTensorFixture::TearDown();
    }
};

#endif /* PITH_TESTS_AUTOGRAD_LIVE_NODES_H */
