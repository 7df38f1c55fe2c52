// The emulated device. Device memory is host memory that the backend
// allocates and registers, so memtype() can tell it apart and MPI can read
// it (a "device-aware" MPI for free). Each stream is a worker thread running
// its queue in order; a kernel splits its index range over a pool of
// threads that run at the same time, so a kernel that needs atomics and
// lacks them really loses updates. Events work as in CUDA: a record
// captures a stream's queue position, a wait makes another stream stop
// there until the first one has passed it.
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.h"
#include "device/device.h"
#include "device/emu_shared.h"

namespace stf {
namespace {

// STF_EMU_PREEMPT=1 (tests only): while a kernel worker runs its chunk, a
// timer interrupts it after every few microseconds it ran, and the handler
// waits until the other workers together ran a few microseconds more on
// their CPU clocks (at most 20 ms; not at all when none is running), as a
// scheduler preempting it at any instruction could. A non-atomic
// read-modify-write cut this way writes back a stale value over what the
// others did meanwhile, so lost updates show on (nearly) every kernel with
// duplicate targets, on any number of cores and under any load. Linux only
// (per-thread timers and CPU clocks); elsewhere the variable does nothing.
bool preempt_requested() {
  const char *v = std::getenv("STF_EMU_PREEMPT");
  return v && *v == '1';
}

struct PreemptShared {
  std::vector<clockid_t> cpu;        // each worker's CPU clock
  std::atomic<int> finished{0};      // workers done with the current kernel
  std::atomic<int> paused{0};        // workers inside the handler
};

struct PreemptTimer {
  timer_t timer{};
  volatile sig_atomic_t armed = 0;
  long long resumed_ns = 0;  // this thread's CPU clock when its last pause ended
  PreemptShared *shared = nullptr;
  int me = 0;
};

constexpr long kRunNs = 20 * 1000, kOthersRunNs = 5 * 1000;
constexpr long long kMaxPauseNs = 20 * 1000 * 1000;

long long clock_ns(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

long long others_cpu_ns(const PreemptTimer *t) {
  long long sum = 0;
  for (std::size_t w = 0; w < t->shared->cpu.size(); ++w)
    if (static_cast<int>(w) != t->me) sum += clock_ns(t->shared->cpu[w]);
  return sum;
}

void start_timer(PreemptTimer *t) {
  const struct itimerspec once = {{0, 0}, {0, kRunNs}};
  timer_settime(t->timer, 0, &once, nullptr);
}

// One-shot timer, re-armed by the handler. The timer counts wall time, so a
// worker descheduled a while would be interrupted again as soon as it runs:
// it pauses only after it ran kRunNs on its own CPU clock, so it always
// progresses. (Everything here is async-signal-safe; the atomics are lock-free.)
void preempt_handler(int, siginfo_t *si, void *) {
  PreemptTimer *t = static_cast<PreemptTimer *>(si->si_value.sival_ptr);
  if (clock_ns(CLOCK_THREAD_CPUTIME_ID) - t->resumed_ns >= kRunNs) {
    PreemptShared &sh = *t->shared;
    const int paused = ++sh.paused;
    const int others = static_cast<int>(sh.cpu.size()) - 1;
    if (others - sh.finished.load() - (paused - 1) > 0) {  // someone else is running
      const long long start = clock_ns(CLOCK_MONOTONIC), others0 = others_cpu_ns(t);
      const struct timespec nap = {0, 10 * 1000};
      while (others_cpu_ns(t) - others0 < kOthersRunNs && clock_ns(CLOCK_MONOTONIC) - start < kMaxPauseNs)
        nanosleep(&nap, nullptr);
    }
    --sh.paused;
    t->resumed_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  }
  if (t->armed) start_timer(t);
}

class Preemptor {
 public:
  Preemptor(PreemptShared *shared, int me) {
    t_.shared = shared;
    t_.me = me;
    static const int installed = [] {
      struct sigaction sa = {};
      sa.sa_sigaction = preempt_handler;
      sa.sa_flags = SA_RESTART | SA_SIGINFO;
      sigemptyset(&sa.sa_mask);
      return sigaction(SIGRTMIN + 4, &sa, nullptr);
    }();
    struct sigevent ev = {};
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGRTMIN + 4;
    ev.sigev_value.sival_ptr = &t_;
    ev._sigev_un._tid = static_cast<pid_t>(gettid());
    ok_ = installed == 0 && timer_create(CLOCK_MONOTONIC, &ev, &t_.timer) == 0;
  }
  ~Preemptor() {
    if (ok_) timer_delete(t_.timer);
  }
  void arm(bool on) {
    if (!ok_) return;
    t_.armed = on;
    if (on) {
      t_.resumed_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
      start_timer(&t_);
    } else {
      const struct itimerspec off = {};
      timer_settime(t_.timer, 0, &off, nullptr);
    }
  }

 private:
  PreemptTimer t_;
  bool ok_ = false;
};

// Kernel workers: one kernel at a time (like a GPU without concurrent
// kernels), its range cut into one contiguous chunk per worker.
class Pool {
 public:
  explicit Pool(int nthreads) : preempt_(preempt_requested()) {
    preempt_shared_.cpu.resize(nthreads);
    for (int t = 0; t < nthreads; ++t) threads_.emplace_back([this, t, nthreads] { work(t, nthreads); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread &t : threads_) t.join();
  }
  void run(stf_int n, const Task &task) {
    std::lock_guard<std::mutex> one_kernel(run_mutex_);
    std::unique_lock<std::mutex> l(m_);
    task_ = &task;
    n_ = n;
    remaining_ = static_cast<int>(threads_.size());
    started_ = 0;
    preempt_shared_.finished = 0;
    ++generation_;
    wake_.notify_all();
    done_.wait(l, [&] { return remaining_ == 0; });
    task_ = nullptr;
  }

 private:
  void work(int t, int nthreads) {
    std::unique_ptr<Preemptor> preemptor;
    if (preempt_) {
      pthread_getcpuclockid(pthread_self(), &preempt_shared_.cpu[t]);  // read only in kernels, after run() locks
      preemptor.reset(new Preemptor(&preempt_shared_, t));
    }
    unsigned long long seen = 0;
    std::unique_lock<std::mutex> l(m_);
    for (;;) {
      wake_.wait(l, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;  // run() waits for every worker, so none misses a generation
      const Task *task = task_;
      const long long n = n_;
      // Start together, as a GPU's blocks do: otherwise one worker may
      // finish its chunk before the next wakes, and races would hide.
      if (++started_ == nthreads) wake_.notify_all();
      wake_.wait(l, [&] { return started_ == nthreads; });
      l.unlock();
      const stf_int b = static_cast<stf_int>(n * t / nthreads), e = static_cast<stf_int>(n * (t + 1) / nthreads);
      if (preemptor) preemptor->arm(true);
      if (b < e) (*task)(b, e);
      if (preemptor) preemptor->arm(false);
      preempt_shared_.finished++;
      l.lock();
      if (--remaining_ == 0) done_.notify_all();
    }
  }

  std::mutex run_mutex_, m_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const Task *task_ = nullptr;
  long long n_ = 0;
  int remaining_ = 0, started_ = 0;
  unsigned long long generation_ = 0;
  bool stop_ = false;
  const bool preempt_;
  PreemptShared preempt_shared_;
};

// A stream: a queue of operations and the thread that runs them in order.
// Positions count operations: enqueued_ and completed_ only grow.
class EmuStream {
 public:
  EmuStream() : worker_([this] { work(); }) {}
  ~EmuStream() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  unsigned long long enqueue(std::function<void()> op) {
    std::lock_guard<std::mutex> l(m_);
    queue_.push_back(std::move(op));
    cv_.notify_all();
    return ++enqueued_;
  }
  unsigned long long position() {
    std::lock_guard<std::mutex> l(m_);
    return enqueued_;
  }
  bool reached(unsigned long long pos) {
    std::lock_guard<std::mutex> l(m_);
    return completed_ >= pos;
  }
  void wait_for(unsigned long long pos) {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return completed_ >= pos; });
  }
  void drain() { wait_for(position()); }

 private:
  void work() {
    std::unique_lock<std::mutex> l(m_);
    for (;;) {
      cv_.wait(l, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and nothing left
      std::function<void()> op = std::move(queue_.front());
      queue_.pop_front();
      l.unlock();
      op();
      l.lock();
      ++completed_;
      cv_.notify_all();
    }
  }

  std::mutex m_;
  std::condition_variable cv_;  // new work, and progress (both rare enough to share)
  std::deque<std::function<void()>> queue_;
  unsigned long long enqueued_ = 0, completed_ = 0;
  bool stop_ = false;
  std::thread worker_;  // last: starts after the members it uses exist
};

struct EmuEvent {
  EmuStream *stream = nullptr;  // nullptr: never recorded (complete, as in CUDA)
  unsigned long long position = 0;
};

int pool_size() {
  const char *v = std::getenv("STF_EMU_THREADS");
  int n = v ? std::atoi(v) : 3;
  return std::min(std::max(n, 1), 16);
}

class EmuDevice final : public Device {
 public:
  EmuDevice() : pool_(pool_size()), library_(new EmuStream) {}
  ~EmuDevice() override {
    library_.reset();
    for (EmuStream *st : streams_) delete st;
    for (auto &seg : segments_) {
      blocks_.erase(seg.first);
      close_emu_segment(&seg.second);
    }
    for (auto &b : blocks_) std::free(reinterpret_cast<void *>(b.first));
  }
  const char *name() const override { return "emu"; }

  int alloc(std::size_t bytes, void **ptr) override {
    // 64-byte alignment as cudaMalloc gives at least; never a zero-sized block
    // so every block has a distinct address.
    const std::size_t size = (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, size);
    if (!p) return set_error(STF_ERR_MEMORY, "emu device: cannot allocate %zu bytes", bytes);
    std::lock_guard<std::mutex> l(m_);
    blocks_[reinterpret_cast<std::uintptr_t>(p)] = size;
    clear_cache();
    *ptr = p;
    return STF_SUCCESS;
  }
  int free(void *ptr) override {
    if (!ptr) return STF_SUCCESS;
    std::lock_guard<std::mutex> l(m_);
    auto it = blocks_.find(reinterpret_cast<std::uintptr_t>(ptr));
    if (it == blocks_.end()) return STF_SUCCESS;  // not ours: ignored, like freeing twice
    auto seg = segments_.find(it->first);
    if (seg != segments_.end() && !seg->second.owner) return STF_SUCCESS;  // a mapping: unmap_shared
    if (seg != segments_.end()) return drop_segment(seg);
    blocks_.erase(it);
    clear_cache();
    std::free(ptr);
    return STF_SUCCESS;
  }
  int alloc_shared(std::size_t bytes, void **ptr, SharedHandle *h) override {
    EmuSegment seg;
    STF_CHECK(create_emu_segment(bytes, &seg, h));
    *ptr = add_segment(seg);
    return STF_SUCCESS;
  }
  int map_shared(const SharedHandle &h, void **ptr) override {
    EmuSegment seg;
    STF_CHECK(open_emu_segment(h, &seg));
    *ptr = add_segment(seg);
    return STF_SUCCESS;
  }
  void shared_mapped(void *ptr) override {
    std::lock_guard<std::mutex> l(m_);
    auto seg = segments_.find(reinterpret_cast<std::uintptr_t>(ptr));
    if (seg != segments_.end()) unlink_emu_segment(&seg->second);
  }
  int unmap_shared(void *ptr) override {
    std::lock_guard<std::mutex> l(m_);
    auto seg = segments_.find(reinterpret_cast<std::uintptr_t>(ptr));
    return seg == segments_.end() || seg->second.owner ? STF_SUCCESS : drop_segment(seg);
  }
  // Queue entries, like every other stream operation.
  int stream_write_word(Stream s, std::uint64_t *word, std::uint64_t value) override {
    stream(s)->enqueue([=] { __atomic_store_n(word, value, __ATOMIC_RELEASE); });
    return STF_SUCCESS;
  }
  int stream_wait_word(Stream s, const std::uint64_t *word, std::uint64_t value) override {
    stream(s)->enqueue([=] { wait_for_word(word, value); });
    return STF_SUCCESS;
  }
  int alloc_pinned(std::size_t bytes, void **ptr) override {
    *ptr = std::malloc(std::max<std::size_t>(bytes, 1));
    return *ptr ? STF_SUCCESS : set_error(STF_ERR_MEMORY, "emu device: cannot allocate %zu pinned bytes", bytes);
  }
  int free_pinned(void *ptr) override {
    std::free(ptr);
    return STF_SUCCESS;
  }

  stf_memtype memtype(const void *ptr) override {
    if (!ptr) return STF_MEMTYPE_HOST;
    const auto key = reinterpret_cast<std::uintptr_t>(ptr);
    std::lock_guard<std::mutex> l(m_);
    // A few recent answers, by exact pointer: operations pass the same
    // arrays again and again. Emptied whenever a block comes or goes.
    for (const CacheEntry &c : cache_)
      if (c.ptr == key) return c.type;
    counters.memtype_queries++;
    stf_memtype t = STF_MEMTYPE_HOST;
    auto it = blocks_.upper_bound(key);
    if (it != blocks_.begin() && key < std::prev(it)->first + std::prev(it)->second) t = STF_MEMTYPE_DEVICE;
    cache_[next_++ % kCache] = CacheEntry{key, t};
    return t;
  }
  long long live_allocations() const override {
    std::lock_guard<std::mutex> l(m_);
    return static_cast<long long>(blocks_.size());
  }

  int stream_create(Stream *s) override {
    EmuStream *st = new EmuStream;
    std::lock_guard<std::mutex> l(m_);
    streams_.push_back(st);
    *s = st;
    return STF_SUCCESS;
  }
  int stream_destroy(Stream s) override {
    if (!s || s == library_.get()) return STF_SUCCESS;
    {
      std::lock_guard<std::mutex> l(m_);
      streams_.erase(std::remove(streams_.begin(), streams_.end(), s), streams_.end());
    }
    delete static_cast<EmuStream *>(s);  // drains its queue first
    return STF_SUCCESS;
  }
  Stream own_stream() override { return library_.get(); }

  int memcpy_async(void *dst, const void *src, std::size_t bytes, CopyKind kind, Stream s) override {
    count_copy(kind);
    stream(s)->enqueue([=] { std::memcpy(dst, src, bytes); });
    return STF_SUCCESS;
  }

  int event_create(Event *e) override {
    *e = new EmuEvent;
    return STF_SUCCESS;
  }
  int event_destroy(Event e) override {
    delete static_cast<EmuEvent *>(e);
    return STF_SUCCESS;
  }
  int event_record(Event e, Stream s) override {
    EmuStream *st = stream(s);
    EmuEvent snapshot{st, st->position()};
    std::lock_guard<std::mutex> l(m_);
    *static_cast<EmuEvent *>(e) = snapshot;
    return STF_SUCCESS;
  }
  int stream_wait_event(Stream s, Event e) override {
    const EmuEvent snapshot = read(e);  // a later record must not change this wait
    if (snapshot.stream) stream(s)->enqueue([snapshot] { snapshot.stream->wait_for(snapshot.position); });
    return STF_SUCCESS;
  }
  int event_query(Event e, bool *done) override {
    const EmuEvent snapshot = read(e);
    *done = !snapshot.stream || snapshot.stream->reached(snapshot.position);
    return STF_SUCCESS;
  }
  int event_synchronize(Event e) override {
    counters.event_syncs++;
    const EmuEvent snapshot = read(e);
    if (snapshot.stream) snapshot.stream->wait_for(snapshot.position);
    return STF_SUCCESS;
  }
  int stream_synchronize(Stream s) override {
    counters.stream_syncs++;
    stream(s)->drain();
    return STF_SUCCESS;
  }
  int synchronize() override {
    counters.device_syncs++;
    library_->drain();
    std::vector<EmuStream *> user;
    {
      std::lock_guard<std::mutex> l(m_);
      user = streams_;
    }
    for (EmuStream *st : user) st->drain();
    return STF_SUCCESS;
  }

 protected:
  int launch_task(Stream s, stf_int n, Task task) override {
    stream(s)->enqueue([this, n, task = std::move(task)] { pool_.run(n, task); });
    return STF_SUCCESS;
  }

 private:
  struct CacheEntry {
    std::uintptr_t ptr = 0;
    stf_memtype type = STF_MEMTYPE_HOST;
  };
  static constexpr int kCache = 8;

  EmuStream *stream(Stream s) { return s ? static_cast<EmuStream *>(s) : library_.get(); }
  EmuEvent read(Event e) {
    std::lock_guard<std::mutex> l(m_);
    return *static_cast<EmuEvent *>(e);
  }
  void clear_cache() {
    for (CacheEntry &c : cache_) c = CacheEntry{};
  }
  // Unmaps a segment (and removes its name where made here); m_ held.
  int drop_segment(std::map<std::uintptr_t, EmuSegment>::iterator seg) {
    blocks_.erase(seg->first);
    clear_cache();
    close_emu_segment(&seg->second);
    segments_.erase(seg);
    return STF_SUCCESS;
  }
  // A segment counts as device memory (a block) while it is mapped here.
  void *add_segment(const EmuSegment &seg) {
    const auto key = reinterpret_cast<std::uintptr_t>(seg.base);
    std::lock_guard<std::mutex> l(m_);
    blocks_[key] = seg.bytes;
    segments_[key] = seg;
    clear_cache();
    return seg.base;
  }

  mutable std::mutex m_;  // blocks_, segments_, cache_, event contents
  std::map<std::uintptr_t, std::size_t> blocks_;
  std::map<std::uintptr_t, EmuSegment> segments_;  // shared blocks, made here or mapped
  std::vector<EmuStream *> streams_;  // user streams (synchronize() drains them)
  CacheEntry cache_[kCache];
  unsigned next_ = 0;
  Pool pool_;
  std::unique_ptr<EmuStream> library_;
};

}  // namespace

std::unique_ptr<Device> make_emu_device() { return std::unique_ptr<Device>(new EmuDevice); }

}  // namespace stf
