// SPDX-License-Identifier: MIT
// example.cpp: a game server's main loop feeding queryd (queryd_feed.hpp).
//
//   g++ -std=c++17 -Wall -Wextra -Werror -pthread example.cpp -o example
//   QUERYD_FEED_SOCKET=/run/queryd/feed.sock ./example
//   QUERYD_FEED_HTTP=http://127.0.0.1:27017 QUERYD_FEED_TOKEN=... ./example
//
// (the socket when QUERYD_FEED_SOCKET is set, the HTTP feed otherwise).
// It sets the state, has a player join, another leave and a score change,
// then runs frames of 16 ms that patch a tick counter ten times a second,
// printing the slowest feed call so far twice a second. QUERYD_FEED_PING
// sets the ping interval in seconds (default 10); QUERYD_EXAMPLE_SECONDS
// how long it runs (default 600).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "queryd_feed.hpp"

using namespace std::chrono;

static long env_long(const char* name, long def) {
  const char* v = std::getenv(name);
  return v && *v ? std::atol(v) : def;
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

  auto slowest = microseconds(0);
  auto timed = [&](auto&& call) {
    auto t0 = steady_clock::now();
    call();
    slowest = std::max(slowest, duration_cast<microseconds>(steady_clock::now() - t0));
  };
  using queryd::object;
  timed([&] {
    feed.replace(object({
        {"name", "Ünïcødé ✓ Server"},
        {"map", "de_dust2"},
        {"max_players", 16},
        {"players", object({{"1", object({{"name", "Zoë"}, {"score", 3}})},
                            {"2", object({{"name", "Łukasz"}, {"score", 7}})}})},
        {"rules", object({{"motd", "say \"hi\" \\o/"}})},
    }));
  });
  std::this_thread::sleep_for(milliseconds(200));
  timed([&] { feed.patch(object({{"players", object({{"3", object({{"name", "Σωκράτης"}, {"score", 1}})}})}})); });  // joins
  std::this_thread::sleep_for(milliseconds(200));
  timed([&] { feed.patch(object({{"players", object({{"2", nullptr}})}})); });  // leaves
  timed([&] { feed.patch(object({{"players", object({{"1", object({{"score", 5}})}})}})); });
  std::printf("fed\n");
  std::fflush(stdout);

  auto end = steady_clock::now() + seconds(env_long("QUERYD_EXAMPLE_SECONDS", 600));
  for (long frame = 1; steady_clock::now() < end; frame++) {
    if (frame % 6 == 0) timed([&] { feed.patch(object({{"values", object({{"tick", frame}})}})); });
    if (frame % 30 == 0) {
      std::printf("slowest call: %lld us\n", static_cast<long long>(slowest.count()));
      std::fflush(stdout);
    }
    std::this_thread::sleep_for(milliseconds(16));
  }
  return 0;
}
