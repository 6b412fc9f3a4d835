// The bookkeeping of a GPU stream's status area (which entry each report writes to), which needs
// no GPU: equal reports share an entry, synchronizations free what they read, captured claims
// stay, and a claim whose work is not yet queued (or that came after the read) is left alone.
#include "runtime/cuda/status_claims.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using weft::runtime::cuda::StatusClaims;

// Claims `key` and marks its work queued, as a launch does.
int claim_queued(StatusClaims& claims, const std::string& key, bool captured = false) {
    const int at = claims.claim(key, captured);
    if (at >= 0) claims.queued(at);
    return at;
}

TEST(StatusClaims, EqualKeysShareAnEntryAndOthersGetTheirOwn) {
    StatusClaims claims(8);
    EXPECT_EQ(claim_queued(claims, "overflow a"), 0);
    EXPECT_EQ(claim_queued(claims, "overflow b"), 1);
    EXPECT_EQ(claim_queued(claims, "overflow a"), 0);
    EXPECT_EQ(claims.claimed().size(), 2u);
}

TEST(StatusClaims, ASynchronizationFreesWhatItReadButKeepsCapturedClaims) {
    StatusClaims claims(8);
    claim_queued(claims, "direct");
    claim_queued(claims, "captured", true);
    claim_queued(claims, "direct too");
    claims.release(claims.claimed());
    ASSERT_EQ(claims.claimed().size(), 2u) << "the free entry at the end is dropped";
    EXPECT_EQ(claims.claimed()[0].key, "");
    EXPECT_EQ(claims.claimed()[1].key, "captured");
    EXPECT_EQ(claim_queued(claims, "next"), 0) << "a freed entry is reused";
    EXPECT_EQ(claim_queued(claims, "captured"), 1) << "the captured claim still serves its key";
}

TEST(StatusClaims, AClaimCapturedLaterStaysEvenIfItWasMadeDirectlyFirst) {
    StatusClaims claims(8);
    claim_queued(claims, "same report");
    claim_queued(claims, "same report", true);
    claims.release(claims.claimed());
    ASSERT_EQ(claims.claimed().size(), 1u);
    EXPECT_TRUE(claims.claimed()[0].persistent);
}

// Another thread's launch claimed before the synchronization looked, but had not queued its
// kernel yet: the synchronization may not have waited for it, so it neither reads nor frees it.
TEST(StatusClaims, AClaimWhoseWorkIsNotQueuedIsNeitherReadNorFreed) {
    StatusClaims claims(8);
    const int at = claims.claim("in flight", false);
    const auto read = claims.claimed();
    EXPECT_FALSE(StatusClaims::readable(read[0]));
    claims.release(read);
    ASSERT_EQ(claims.claimed().size(), 1u);
    claims.queued(at);
    const auto later = claims.claimed();
    EXPECT_TRUE(StatusClaims::readable(later[0]));
    claims.release(later);
    EXPECT_TRUE(claims.claimed().empty());
}

// A launch shared the entry after the synchronization read it: its failure is still to come, so
// the entry is neither zeroed nor freed.
TEST(StatusClaims, AnEntryClaimedAgainSinceTheReadIsKept) {
    StatusClaims claims(8);
    claim_queued(claims, "report");
    const auto read = claims.claimed();
    claim_queued(claims, "report");
    EXPECT_FALSE(claims.unchanged(0, read[0]));
    claims.release(read);
    ASSERT_EQ(claims.claimed().size(), 1u);
    EXPECT_EQ(claims.claimed()[0].key, "report");

    const auto reread = claims.claimed();
    claims.release(reread);
    claim_queued(claims, "other");  // the freed entry, taken by another report
    EXPECT_FALSE(claims.unchanged(0, reread[0]));
    claims.release(reread);
    ASSERT_EQ(claims.claimed().size(), 1u);
    EXPECT_EQ(claims.claimed()[0].key, "other");
}

TEST(StatusClaims, AFullAreaRefusesANewKeyButServesAKnownOne) {
    StatusClaims claims(2);
    EXPECT_EQ(claim_queued(claims, "a", true), 0);
    EXPECT_EQ(claim_queued(claims, "b", true), 1);
    EXPECT_EQ(claims.claim("c", false), -1);
    EXPECT_EQ(claim_queued(claims, "b"), 1);
    claims.release(claims.claimed());
    EXPECT_EQ(claims.claim("c", false), -1) << "captured claims are never freed";
}

}  // namespace
