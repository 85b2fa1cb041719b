// GET /audit's query (service/api_audit.h): every parameter parsed and bounded, and a
// bad one refused with its name and the values it takes.
#include "service/api_audit.h"

#include <gtest/gtest.h>

#include <string>

namespace trtwatch::service {
namespace {

TEST(AuditQueryTest, ParsesEveryParameter) {
  const Result<builds::AuditQuery> q =
      ParseAuditQuery("/audit?limit=5&before=42&user=ana&action=build.cancel&target=b_%31");
  ASSERT_TRUE(q.ok()) << q.error();
  EXPECT_EQ(q->limit, 5);
  EXPECT_EQ(q->before, 42);
  EXPECT_EQ(q->user, "ana");
  EXPECT_EQ(q->action, "build.cancel");
  EXPECT_EQ(q->target_prefix, "b_1");
  const Result<builds::AuditQuery> plain = ParseAuditQuery("/audit");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->limit, builds::kAuditLimitDefault);
  EXPECT_EQ(plain->before, 0);
}

TEST(AuditQueryTest, RefusesBadParametersNamingThemAndTheirValues) {
  const struct {
    const char* target;
    const char* error;
  } cases[] = {
      {"/audit?limit=0", "limit must be an integer from 1 to 1000"},
      {"/audit?limit=1001", "limit must be an integer from 1 to 1000"},
      {"/audit?limit=x", "limit must be an integer from 1 to 1000"},
      {"/audit?before=0", "before must be a positive integer: the next_before of the page before"},
      {"/audit?before=-3", "before must be a positive integer: the next_before of the page before"},
      {"/audit?user=", "user must be a user's name of 1 to 64 bytes"},
      {"/audit?action=build.explode",
       "action must be one of build.submit, build.cancel, group.submit, group.cancel, model.upload, model.delete, "
       "ui.sign_in, ui.sign_out, timing_cache.delete"},
      {"/audit?since=1h", "unknown query parameter \"since\"; use limit, before, user, action or target"},
  };
  for (const auto& c : cases) {
    const Result<builds::AuditQuery> q = ParseAuditQuery(c.target);
    ASSERT_FALSE(q.ok()) << c.target;
    EXPECT_EQ(q.error(), c.error) << c.target;
  }
  EXPECT_FALSE(ParseAuditQuery("/audit?user=a%0Ab").ok()) << "a control character";
  EXPECT_FALSE(ParseAuditQuery("/audit?target=" + std::string(257, 't')).ok());
}

}  // namespace
}  // namespace trtwatch::service
