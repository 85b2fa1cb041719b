// Claims: one replica's claims and leases over the queue, on simulated time.
#include "builds/claims.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/clock.h"
#include "support/fake_clock.h"

namespace trtwatch::builds {
namespace {

// A queue that records what it is asked and answers what the test says.
class ScriptedQueue final : public BuildQueue {
 public:
  bool shared() const override { return shared_; }
  QueueResult AddClaimed(const std::string& id, const std::string&, const std::string& replica,
                         double lease_seconds) override {
    asked.push_back("add " + id + " " + replica + " " + std::to_string(static_cast<int>(lease_seconds)));
    return QueueDone<QueueResult>();
  }
  ClaimResult ClaimQueued(const std::string& replica, int count, double) override {
    asked.push_back("claim " + replica + " " + std::to_string(count));
    return QueueDone<ClaimResult>();
  }
  ClaimResult ClaimQueuedBuild(const std::string& id, const std::string&, double) override {
    asked.push_back("claim-one " + id);
    return QueueDone<ClaimResult>();
  }
  CountResult CountQueued() override { return QueueDone<CountResult>(); }
  RenewResult RenewLeases(const std::string& replica, double) override {
    asked.push_back("renew " + replica);
    if (!renew_error.empty()) return QueueFailed<RenewResult>(renew_error);
    RenewResult r = QueueDone<RenewResult>();
    r.ids = renewed;
    return r;
  }
  ClaimResult ClaimOrphans(const std::string& replica, double, bool at_start) override {
    asked.push_back("orphans " + replica + (at_start ? " at-start" : ""));
    return QueueDone<ClaimResult>();
  }
  ConditionalResult RequestCancel(const std::string&, const std::string&) override {
    return QueueDone<ConditionalResult>();
  }
  CancelRequestsResult TakeCancelRequests(const std::string&) override { return QueueDone<CancelRequestsResult>(); }

  bool shared_ = true;
  std::vector<std::string> renewed;
  std::string renew_error;
  std::vector<std::string> asked;
};

TEST(ClaimsTest, ClaimsInThisReplicasNameWithItsLease) {
  ScriptedQueue queue;
  FakeClock clock;
  Claims claims(queue, clock, "east", 15);
  (void)claims.AddClaimed("b1", "{}");
  (void)claims.Queued(2);
  (void)claims.QueuedBuild("b2");
  (void)claims.Orphans(/*at_start=*/true);
  EXPECT_EQ(queue.asked,
            (std::vector<std::string>{"add b1 east 15", "claim east 2", "claim-one b2", "orphans east at-start"}));
}

// Why: renewals and the search for orphans run every third of the lease, not every tick.
TEST(ClaimsTest, LeaseWorkIsDueEveryThirdOfTheLease) {
  ScriptedQueue queue;
  FakeClock clock;
  Claims claims(queue, clock, "east", 15);
  EXPECT_FALSE(claims.LeaseWorkDue());
  clock.AdvanceSeconds(4.9);
  EXPECT_FALSE(claims.LeaseWorkDue());
  clock.AdvanceSeconds(0.1);
  EXPECT_TRUE(claims.LeaseWorkDue());
  EXPECT_FALSE(claims.LeaseWorkDue()) << "due again only a third of the lease later";
  clock.AdvanceSeconds(5);
  EXPECT_TRUE(claims.LeaseWorkDue());
}

// Why: a build whose lease was not renewed was concluded by another replica; this one
// must stop writing it (the manager fences exactly those).
TEST(ClaimsTest, RenewNamesTheBuildsWhoseLeaseWasLost) {
  ScriptedQueue queue;
  FakeClock clock;
  Claims claims(queue, clock, "east", 15);
  queue.renewed = {"b1", "b3"};
  const RenewOutcome outcome = claims.Renew({"b1", "b2", "b3"});
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome.lost, (std::set<std::string>{"b2"}));
}

TEST(ClaimsTest, RenewAsksNothingWithoutBuildsAndReportsAStoreFailure) {
  ScriptedQueue queue;
  FakeClock clock;
  Claims claims(queue, clock, "east", 15);
  EXPECT_TRUE(claims.Renew({}).ok());
  EXPECT_TRUE(queue.asked.empty());
  queue.renew_error = "connection lost";
  const RenewOutcome outcome = claims.Renew({"b1"});
  EXPECT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error, "connection lost");
  EXPECT_TRUE(outcome.lost.empty()) << "a failed renewal fences nothing";
}

// Why: a worker pid means something only on the host that started it.
TEST(ClaimsTest, AnOrphanIsOursWhenThisReplicaOrNobodyOwnedIt) {
  ScriptedQueue queue;
  FakeClock clock;
  Claims claims(queue, clock, "east", 15);
  EXPECT_TRUE(claims.WasOurs({"{}", ""}));
  EXPECT_TRUE(claims.WasOurs({"{}", "east"}));
  EXPECT_FALSE(claims.WasOurs({"{}", "west"}));
  queue.shared_ = false;  // SQLite: one process serves the data dir
  EXPECT_TRUE(claims.WasOurs({"{}", "west"}));
}

}  // namespace
}  // namespace trtwatch::builds
