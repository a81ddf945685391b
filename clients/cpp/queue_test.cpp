// SPDX-License-Identifier: MIT
// queue_test.cpp: run by clients/TestCppQueue against a live queryd. It
// feeds a state and prints "ready"; when a line comes on stdin (queryd is
// frozen by then) it sends 10 patches at once through a Feed whose queue
// holds 2, prints "patched" and waits for stdin to close. The patches past
// the queue must collapse into one replace of the newest state.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "queryd_feed.hpp"

int main() {
  queryd::Options opts;
  opts.socket = std::getenv("QUERYD_FEED_SOCKET");
  opts.max_queue = 2;
  opts.ping_every = std::chrono::seconds(1);  // pings change no version
  queryd::Feed feed(opts);
  feed.on_error([](const std::string& e) { std::fprintf(stderr, "feed error: %s\n", e.c_str()); });
  using queryd::object;
  feed.replace(object({{"name", "queue test"}, {"values", object({{"tick", 0}})}}));
  while (!feed.connected()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the replace answered
  std::printf("ready\n");
  std::fflush(stdout);
  std::string line;
  std::getline(std::cin, line);
  for (int tick = 1; tick <= 10; tick++) feed.patch(object({{"values", object({{"tick", tick}})}}));
  std::printf("patched\n");
  std::fflush(stdout);
  while (std::getline(std::cin, line)) {
  }
  return 0;
}
