// The kubelet's image pull back-off, step by step on an injected clock (no sleeps):
// ErrImagePull after each failed pull, ImagePullBackOff at the looks in between, the
// back-off doubling from 10 s to its 300 s cap, the Events of each, and the
// Never policy's ErrImageNeverPull without back-off.
#include "server/image_pull_backoff.h"

#include <gtest/gtest.h>

#include "server/local_kubelet.h"

namespace muster::server {
namespace {

using Next = ImagePullBackOff::Next;

constexpr char kImage[] = "registry.example/team/trainer:2";
const std::string kKey = ImagePullBackOff::Key("team-a_train-0", kImage);

TEST(ImagePullBackOff, AFailedPullIsErrImagePullWithTheKubeletsEvents) {
  ImagePullBackOff backoff;
  ImageWaitState s = backoff.PullFailed(kKey, kImage, "connection refused", 100);
  EXPECT_EQ(s.reason, "ErrImagePull");
  EXPECT_EQ(s.message, "connection refused");
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_EQ(s.events[0].type, "Warning");
  EXPECT_EQ(s.events[0].reason, "Failed");
  EXPECT_EQ(s.events[0].message,
            "Failed to pull image \"registry.example/team/trainer:2\": connection refused");
  EXPECT_EQ(s.events[1].message, "Error: ErrImagePull");
  EXPECT_EQ(backoff.Delay(kKey), 10);
}

TEST(ImagePullBackOff, LooksBetweenPullsShowImagePullBackOffAndTheDelayDoubles) {
  ImagePullBackOff backoff;  // 10 s, 300 s
  ImageWaitState s;
  backoff.PullFailed(kKey, kImage, "e", 0);
  // Next look after 10 s (the pod worker's re-sync): the 10 s back-off is over.
  EXPECT_EQ(backoff.Sync(kKey, kImage, 9.9, &s), Next::kWait);
  EXPECT_EQ(backoff.Sync(kKey, kImage, 10, &s), Next::kRetry);
  backoff.PullFailed(kKey, kImage, "e", 10);  // 20 s now
  EXPECT_EQ(backoff.Delay(kKey), 20);
  EXPECT_EQ(backoff.Sync(kKey, kImage, 19, &s), Next::kWait);
  ASSERT_EQ(backoff.Sync(kKey, kImage, 20, &s), Next::kBackOff);  // 10 s into 20
  EXPECT_EQ(s.reason, "ImagePullBackOff");
  EXPECT_EQ(s.message, "Back-off pulling image \"registry.example/team/trainer:2\"");
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_EQ(s.events[0].type, "Normal");
  EXPECT_EQ(s.events[0].reason, "BackOff");
  EXPECT_EQ(s.events[0].message, s.message);
  EXPECT_EQ(s.events[1].message, "Error: ImagePullBackOff");
  EXPECT_EQ(backoff.Sync(kKey, kImage, 29, &s), Next::kWait);
  EXPECT_EQ(backoff.Sync(kKey, kImage, 30, &s), Next::kRetry);  // 10 + 20
  // 40, 80, 160, then the 300 s cap.
  double at = 30;
  for (double want : {40.0, 80.0, 160.0, 300.0, 300.0}) {
    backoff.PullFailed(kKey, kImage, "e", at);
    EXPECT_EQ(backoff.Delay(kKey), want);
    // Looks every 10 s show the back-off; the retry comes when it has run out.
    int backoffs = 0;
    Next next;
    double t = at;
    while ((next = backoff.Sync(kKey, kImage, t, &s)) != Next::kRetry) {
      if (next == Next::kBackOff) ++backoffs;
      t += 1;
    }
    EXPECT_EQ(t, at + want);
    EXPECT_EQ(backoffs, static_cast<int>(want / 10) - 1);
    at = t;
  }
}

TEST(ImagePullBackOff, ALongQuietSpellStartsAfresh) {
  ImagePullBackOff backoff({1, 4});
  backoff.PullFailed(kKey, kImage, "e", 0);
  backoff.PullFailed(kKey, kImage, "e", 1);
  backoff.PullFailed(kKey, kImage, "e", 3);
  EXPECT_EQ(backoff.Delay(kKey), 4);
  backoff.PullFailed(kKey, kImage, "e", 7);
  EXPECT_EQ(backoff.Delay(kKey), 4);               // capped
  backoff.PullFailed(kKey, kImage, "e", 7 + 8.5);  // more than 2 x max later
  EXPECT_EQ(backoff.Delay(kKey), 1);
}

TEST(ImagePullBackOff, ForgettingAPodEndsItsBackOff) {
  ImagePullBackOff backoff;
  backoff.PullFailed(kKey, kImage, "e", 0);
  backoff.PullFailed(kKey, kImage, "e", 10);
  EXPECT_TRUE(backoff.Waiting(kKey));
  backoff.Forget(kKey);
  EXPECT_FALSE(backoff.Waiting(kKey));
  ImageWaitState s;
  EXPECT_EQ(backoff.Sync(kKey, kImage, 11, &s), Next::kRetry);
  backoff.PullFailed(kKey, kImage, "e", 11);
  EXPECT_EQ(backoff.Delay(kKey), 10);  // a new pod starts at the initial back-off
  // Other pods and images have their own.
  EXPECT_FALSE(backoff.Waiting(ImagePullBackOff::Key("team-a_train-1", kImage)));
}

TEST(ImagePullBackOff, NeverPullWaitsWithoutBackOffAndLooksAgainEveryPeriod) {
  ImagePullBackOff backoff({2, 8});
  ImageWaitState s = backoff.NeverPull(kKey, "localhost/absent:1", 0);
  EXPECT_EQ(s.reason, "ErrImageNeverPull");
  EXPECT_EQ(s.message,
            "Container image \"localhost/absent:1\" is not present with pull policy "
            "of Never");
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_EQ(s.events[0].reason, "ErrImageNeverPull");
  EXPECT_EQ(s.events[0].message, s.message);
  EXPECT_EQ(s.events[1].message, "Error: ErrImageNeverPull");
  EXPECT_EQ(backoff.Delay(kKey), 0);
  EXPECT_EQ(backoff.Sync(kKey, "localhost/absent:1", 1.9, &s), Next::kWait);
  EXPECT_EQ(backoff.Sync(kKey, "localhost/absent:1", 2, &s), Next::kRetry);
  backoff.NeverPull(kKey, "localhost/absent:1", 2);
  EXPECT_EQ(backoff.Sync(kKey, "localhost/absent:1", 4, &s), Next::kRetry);  // no doubling
}

TEST(ParseImagePullBackOff, DurationsAndTheirOrder) {
  auto d = ParseImagePullBackOff("10s,300s");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->initial_seconds, 10);
  EXPECT_EQ(d->max_seconds, 300);
  d = ParseImagePullBackOff("500ms,2s");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->initial_seconds, 0.5);
  for (const char* bad : {"10s", "0s,1s", "5s,1s", "x,1s"}) {
    auto r = ParseImagePullBackOff(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("--image-pull-backoff"), std::string::npos);
  }
}

}  // namespace
}  // namespace muster::server
