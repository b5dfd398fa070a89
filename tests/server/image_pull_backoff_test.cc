// The kubelet's image pull back-off, step by step on an injected clock (no sleeps):
// ErrImagePull after each failed pull, ImagePullBackOff at the looks in between, the
// back-off doubling from 10 s to its 300 s cap, the Events of each, and the
// Never policy's ErrImageNeverPull without back-off; the pull step's Events; the
// back-off carried over a restart of the server (Save/Load).
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

TEST(ImagePullBackOff, ThePullStepsEventsAreTheKubelets) {
  PodEventNote pulling = PullingEvent(kImage);
  EXPECT_EQ(pulling.type, "Normal");
  EXPECT_EQ(pulling.reason, "Pulling");
  EXPECT_EQ(pulling.message, "Pulling image \"registry.example/team/trainer:2\"");
  PodEventNote pulled = PulledEvent(kImage, 1.2345, 4096);
  EXPECT_EQ(pulled.reason, "Pulled");
  EXPECT_EQ(pulled.message,
            "Successfully pulled image \"registry.example/team/trainer:2\" in 1.234s (1.234s "
            "including waiting). Image size: 4096 bytes.");
  PodEventNote present = AlreadyPresentEvent(kImage);
  EXPECT_EQ(present.type, "Normal");
  EXPECT_EQ(present.reason, "Pulled");
  EXPECT_EQ(present.message,
            "Container image \"registry.example/team/trainer:2\" already present on machine");
}

TEST(ImagePullBackOff, DurationsPrintAsGoDoes) {
  EXPECT_EQ(GoDuration(0), "0s");
  EXPECT_EQ(GoDuration(0.0004), "0s");
  EXPECT_EQ(GoDuration(0.25), "250ms");
  EXPECT_EQ(GoDuration(1), "1s");
  EXPECT_EQ(GoDuration(1.5), "1.5s");
  EXPECT_EQ(GoDuration(123.004), "2m3.004s");
  EXPECT_EQ(GoDuration(120), "2m0s");
  EXPECT_EQ(GoDuration(3600), "1h0m0s");
}

TEST(ImagePullBackOff, ARestartedServerResumesTheBackOffWhereItWas) {
  ImagePullBackOff before;
  ImageWaitState s;
  // Failures at 0, 10, 30, 70: the back-off is 80 s from 70.
  before.PullFailed(kKey, kImage, "e", 0);
  for (double at : {10.0, 30.0, 70.0}) {
    EXPECT_EQ(before.Sync(kKey, kImage, at, &s), Next::kRetry);
    before.PullFailed(kKey, kImage, "e", at);
  }
  ASSERT_EQ(before.Delay(kKey), 80);
  const uint64_t version = before.version();
  EXPECT_EQ(before.Sync(kKey, kImage, 80, &s), Next::kBackOff);
  EXPECT_EQ(before.version(), version);  // a look changes nothing worth saving

  // Killed at 95, started again at 100 from what was saved.
  ImagePullBackOff after;
  after.Load(nlohmann::json::parse(before.Save().dump()));
  EXPECT_EQ(after.Delay(kKey), 80);
  EXPECT_TRUE(after.Waiting(kKey));
  // Its first look is due at once: still in back-off (until 150), not retried.
  ASSERT_EQ(after.Sync(kKey, kImage, 100, &s), Next::kBackOff);
  EXPECT_EQ(s.reason, "ImagePullBackOff");
  EXPECT_EQ(after.Sync(kKey, kImage, 150, &s), Next::kRetry);
  // The next failure doubles it, as if the server had never stopped.
  after.PullFailed(kKey, kImage, "e", 150);
  EXPECT_EQ(after.Delay(kKey), 160);

  // Entries of pods that no adopted gang holds are dropped.
  const std::string other = ImagePullBackOff::Key("team-a_gone-0", kImage);
  after.PullFailed(other, kImage, "e", 150);
  after.Retain({"team-a_train-0"});
  EXPECT_TRUE(after.Waiting(kKey));
  EXPECT_FALSE(after.Waiting(other));
}

}  // namespace
}  // namespace muster::server
