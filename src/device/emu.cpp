// The emulated device. Device memory is host memory that the backend
// allocates and registers, so memtype() can tell it apart and MPI can read
// it (a "device-aware" MPI for free). Each stream is a worker thread running
// its queue in order; a kernel splits its index range over a pool of
// threads that run at the same time, so a kernel that needs atomics and
// lacks them really loses updates. Events work as in CUDA: a record
// captures a stream's queue position, a wait makes another stream stop
// there until the first one has passed it.
#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.h"
#include "device/device.h"

namespace stf {
namespace {

// Kernel workers: one kernel at a time (like a GPU without concurrent
// kernels), its range cut into one contiguous chunk per worker.
class Pool {
 public:
  explicit Pool(int nthreads) {
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
    ++generation_;
    wake_.notify_all();
    done_.wait(l, [&] { return remaining_ == 0; });
    task_ = nullptr;
  }

 private:
  void work(int t, int nthreads) {
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
      if (b < e) (*task)(b, e);
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
  void free(void *ptr) override {
    if (!ptr) return;
    std::lock_guard<std::mutex> l(m_);
    auto it = blocks_.find(reinterpret_cast<std::uintptr_t>(ptr));
    if (it == blocks_.end()) return;  // not ours: ignored, like freeing twice
    blocks_.erase(it);
    clear_cache();
    std::free(ptr);
  }
  int alloc_pinned(std::size_t bytes, void **ptr) override {
    *ptr = std::malloc(std::max<std::size_t>(bytes, 1));
    return *ptr ? STF_SUCCESS : set_error(STF_ERR_MEMORY, "emu device: cannot allocate %zu pinned bytes", bytes);
  }
  void free_pinned(void *ptr) override { std::free(ptr); }

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
  void stream_destroy(Stream s) override {
    if (!s || s == library_.get()) return;
    {
      std::lock_guard<std::mutex> l(m_);
      streams_.erase(std::remove(streams_.begin(), streams_.end(), s), streams_.end());
    }
    delete static_cast<EmuStream *>(s);  // drains its queue first
  }
  Stream own_stream() override { return library_.get(); }

  void memcpy_async(void *dst, const void *src, std::size_t bytes, CopyKind kind, Stream s) override {
    count_copy(kind);
    stream(s)->enqueue([=] { std::memcpy(dst, src, bytes); });
  }

  int event_create(Event *e) override {
    *e = new EmuEvent;
    return STF_SUCCESS;
  }
  void event_destroy(Event e) override { delete static_cast<EmuEvent *>(e); }
  void event_record(Event e, Stream s) override {
    EmuStream *st = stream(s);
    EmuEvent snapshot{st, st->position()};
    std::lock_guard<std::mutex> l(m_);
    *static_cast<EmuEvent *>(e) = snapshot;
  }
  void stream_wait_event(Stream s, Event e) override {
    const EmuEvent snapshot = read(e);  // a later record must not change this wait
    if (!snapshot.stream) return;
    stream(s)->enqueue([snapshot] { snapshot.stream->wait_for(snapshot.position); });
  }
  bool event_query(Event e) override {
    const EmuEvent snapshot = read(e);
    return !snapshot.stream || snapshot.stream->reached(snapshot.position);
  }
  void event_synchronize(Event e) override {
    counters.event_syncs++;
    const EmuEvent snapshot = read(e);
    if (snapshot.stream) snapshot.stream->wait_for(snapshot.position);
  }
  void stream_synchronize(Stream s) override {
    counters.stream_syncs++;
    stream(s)->drain();
  }
  void synchronize() override {
    counters.device_syncs++;
    library_->drain();
    std::vector<EmuStream *> user;
    {
      std::lock_guard<std::mutex> l(m_);
      user = streams_;
    }
    for (EmuStream *st : user) st->drain();
  }

 protected:
  void launch_task(Stream s, stf_int n, Task task) override {
    stream(s)->enqueue([this, n, task = std::move(task)] { pool_.run(n, task); });
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

  mutable std::mutex m_;  // blocks_, cache_, event contents
  std::map<std::uintptr_t, std::size_t> blocks_;
  std::vector<EmuStream *> streams_;  // user streams (synchronize() drains them)
  CacheEntry cache_[kCache];
  unsigned next_ = 0;
  Pool pool_;
  std::unique_ptr<EmuStream> library_;
};

}  // namespace

std::unique_ptr<Device> make_emu_device() { return std::unique_ptr<Device>(new EmuDevice); }

}  // namespace stf
