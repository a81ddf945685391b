// SPDX-License-Identifier: MIT
// recover_test.cpp: run by clients/TestCppRecover against a live queryd (or
// one not started yet). A game loop of 16 ms frames: the good state at
// once, a patch queryd rejects (score 1.5) after 1 s unless
// QUERYD_RECOVER_BAD=0, a good patch (a player joins) after 1.5 s, a tick
// patch every 100 ms; each rejection printed as "rejected OP: REPLY". It runs
// for QUERYD_EXAMPLE_SECONDS (default 60). The same timeline as the other
// languages' recover tests (clients/recover_test.go).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "queryd_feed.hpp"

using namespace std::chrono;

static long env_long(const char* name, long def) {
  const char* v = std::getenv(name);
  return v && *v ? std::atol(v) : def;
}

static std::mutex out_mu;

static void say(const std::string& line) {
  std::lock_guard<std::mutex> l(out_mu);
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

int main() {
  queryd::Options opts;
  const char* sock = std::getenv("QUERYD_FEED_SOCKET");
  const char* http = std::getenv("QUERYD_FEED_HTTP");
  if (sock && *sock) {
    opts.socket = sock;
  } else if (http && *http) {
    opts.http = http;
    if (const char* tok = std::getenv("QUERYD_FEED_TOKEN")) opts.token = tok;
  }
  opts.ping_every = seconds(env_long("QUERYD_FEED_PING", 10));
  queryd::Feed feed(opts);
  feed.on_error([](const std::string& e) { std::fprintf(stderr, "feed error: %s\n", e.c_str()); });
  feed.on_rejected([](const queryd::Rejection& r) { say("rejected " + r.op + ": " + r.reply); });
  bool bad = env_long("QUERYD_RECOVER_BAD", 1) != 0;

  using queryd::object;
  auto start = steady_clock::now();
  feed.replace(object({{"name", "recover test"},
                       {"map", "good_map"},
                       {"max_players", 8},
                       {"players", object({{"1", object({{"name", "Zoë"}, {"score", 3}})}})}}));
  say("good");
  int step = 1;
  long tick = 0;
  auto next_tick = start + milliseconds(100);
  auto end = start + seconds(env_long("QUERYD_EXAMPLE_SECONDS", 60));
  while (steady_clock::now() < end) {
    auto now = steady_clock::now();
    if (step == 1 && now >= start + milliseconds(1000)) {
      if (bad) {
        feed.patch(object({{"players", object({{"1", object({{"score", 1.5}})}})}}));
        say("bad");
      }
      step = 2;
    }
    if (step == 2 && now >= start + milliseconds(1500)) {
      feed.patch(object({{"players", object({{"2", object({{"name", "Later"}, {"score", 2}})}})}}));
      say("later");
      step = 3;
    }
    if (now >= next_tick) {
      feed.patch(object({{"values", object({{"tick", ++tick}})}}));
      next_tick += milliseconds(100);
    }
    std::this_thread::sleep_for(milliseconds(16));
  }
  return 0;
}
