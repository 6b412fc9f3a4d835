// The bookkeeping of a GPU stream's status area (which entry each report writes to), which needs
// no GPU: equal reports share an entry, synchronizations free entries, captured ones stay.
#include "runtime/cuda/status_claims.hpp"

#include <gtest/gtest.h>

namespace {

using weft::runtime::cuda::StatusClaims;

TEST(StatusClaims, EqualKeysShareAnEntryAndOthersGetTheirOwn) {
    StatusClaims claims(8);
    EXPECT_EQ(claims.claim("overflow a", false), 0);
    EXPECT_EQ(claims.claim("overflow b", false), 1);
    EXPECT_EQ(claims.claim("overflow a", false), 0);
    EXPECT_EQ(claims.claimed().size(), 2u);
}

TEST(StatusClaims, ASynchronizationFreesWhatItReadButKeepsCapturedClaims) {
    StatusClaims claims(8);
    claims.claim("direct", false);
    claims.claim("captured", true);
    claims.claim("direct too", false);
    claims.release(claims.claimed());
    ASSERT_EQ(claims.claimed().size(), 2u) << "the free entry at the end is dropped";
    EXPECT_EQ(claims.claimed()[0].key, "");
    EXPECT_EQ(claims.claimed()[1].key, "captured");
    EXPECT_EQ(claims.claim("next", false), 0) << "a freed entry is reused";
    EXPECT_EQ(claims.claim("captured", false), 1) << "the captured claim still serves its key";
}

TEST(StatusClaims, AClaimCapturedLaterStaysEvenIfItWasMadeDirectlyFirst) {
    StatusClaims claims(8);
    claims.claim("same report", false);
    claims.claim("same report", true);
    claims.release(claims.claimed());
    ASSERT_EQ(claims.claimed().size(), 1u);
    EXPECT_TRUE(claims.claimed()[0].persistent);
}

TEST(StatusClaims, AnEntryClaimedAgainSinceTheReadIsNotFreed) {
    StatusClaims claims(8);
    claims.claim("first", false);
    const auto read = claims.claimed();
    claims.release(read);
    claims.claim("second", false);  // takes entry 0 again, after the read
    claims.release(read);
    ASSERT_EQ(claims.claimed().size(), 1u);
    EXPECT_EQ(claims.claimed()[0].key, "second");
}

TEST(StatusClaims, AFullAreaRefusesANewKeyButServesAKnownOne) {
    StatusClaims claims(2);
    EXPECT_EQ(claims.claim("a", true), 0);
    EXPECT_EQ(claims.claim("b", true), 1);
    EXPECT_EQ(claims.claim("c", false), -1);
    EXPECT_EQ(claims.claim("b", false), 1);
    claims.release(claims.claimed());
    EXPECT_EQ(claims.claim("c", false), -1) << "captured claims are never freed";
}

}  // namespace
