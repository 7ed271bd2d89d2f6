// Invocations: the records a call leaves, terminal states, and `lost` when the owner is gone.
#include "cko/run/invocation.hpp"

#include "cko/run/call_guard.hpp"
#include "cko/run/shared_fs.hpp"

#include "cko/store/fsck.hpp"
#include "cko/util/clock.hpp"
#include "cko/util/files.hpp"
#include "cko_test_support.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <set>
#include <thread>

namespace cko::run {
namespace {
namespace fs = std::filesystem;
using InvocationTest = test::ScratchTest;

// One call of `spec` in the invocation's next slot; the command gets the request file's path as
// its last argument ($1 of the `sh -c` scripts below).
CallOutcome call_in_next_slot(Invocation& inv, CallSpec spec) {
    const CallSlot slot = inv.open_call();
    spec.argv.push_back(slot.request_path.string());
    return inv.call(slot, spec);
}

TEST(InvocationState, NamesRoundTrip) {
    for (const auto s :
         {InvocationState::running, InvocationState::succeeded, InvocationState::failed,
          InvocationState::cancelled, InvocationState::timed_out, InvocationState::lost}) {
        EXPECT_EQ(state_from_name(state_name(s)), s);
    }
    EXPECT_FALSE(state_from_name("done").has_value());
}

// The held time of calls splits into the workload, the SDK (the rest of the driver's time) and
// cko (the rest of the window); the split needs every call's workload time.
TEST(HeldTime, SplitsTheWindowIntoWorkloadSdkAndCko) {
    HeldTime t;
    t.add(0.010, 0.008, 0.006);
    t.add(0.020, 0.015, 0.012);
    Json j = t.to_json();
    EXPECT_EQ(j["calls"], 2);
    EXPECT_NEAR(j["held_s"].get<double>(), 0.030, 1e-12);
    EXPECT_NEAR(j["driver_work_s"].get<double>(), 0.018, 1e-12);
    EXPECT_NEAR(j["sdk_s"].get<double>(), 0.005, 1e-12);
    EXPECT_NEAR(j["cko_s"].get<double>(), 0.007, 1e-12);
    EXPECT_NEAR(j["per_request_ms"]["cko"].get<double>(), 3.5, 1e-9);
    // A driver that does not report its workload: cko's share only.
    t.add(0.010, 0.009, std::nullopt);
    j = t.to_json();
    EXPECT_TRUE(j["driver_work_s"].is_null());
    EXPECT_TRUE(j["sdk_s"].is_null());
    EXPECT_NEAR(j["cko_s"].get<double>(), 0.008, 1e-12);
    // A driver's clock can never give it more than the window (nor its workload more than it).
    HeldTime over;
    over.add(0.010, 0.020, 0.030);
    EXPECT_NEAR(over.to_json()["cko_s"].get<double>(), 0.0, 1e-12);
    EXPECT_NEAR(over.to_json()["sdk_s"].get<double>(), 0.0, 1e-12);
}

// The listing around a driver call: an unchanged directory shares its entries with the listing
// before (nothing is compared there), a file planted in a directory read long ago is still found
// (its mtime and ctime changed), and a file in a new directory too.
TEST_F(InvocationTest, TheStoreListingFindsEveryAddedFileAndSkipsUnchangedDirectories) {
    const store::Store s = store::Store::create(dir_ / "art");
    fs::create_directories(dir_ / "art/invocations/inv-old/driver/0001");
    fs::create_directories(dir_ / "art/quiet");
    std::ofstream(dir_ / "art/invocations/inv-old/driver/0001/kept.txt") << "x";
    std::ofstream(dir_ / "art/quiet/a.txt") << "a";
    // Quiet for a minute: trusted by the racy rule, so later listings reuse what was read.
    const struct timespec old[2] = {{::time(nullptr) - 60, 0}, {::time(nullptr) - 60, 0}};
    for (const char* d : {"art/invocations/inv-old/driver/0001", "art/quiet"}) {
        ASSERT_EQ(::utimensat(AT_FDCWD, (dir_ / d).c_str(), old, 0), 0);
    }
    const auto first = list_store_files(s, "invocations/inv-x/driver/0001/out");
    EXPECT_TRUE(first->files().contains("quiet/a.txt"));
    const auto again = list_store_files(s, "invocations/inv-x/driver/0001/out");
    EXPECT_EQ(again->dirs.at("quiet"), first->dirs.at("quiet"));  // not read again
    EXPECT_TRUE(files_added(*first, *again).empty());

    std::ofstream(dir_ / "art/invocations/inv-old/driver/0001/planted.txt") << "p";
    // Even with its mtime put back, the directory's ctime moved: it is read again.
    ASSERT_EQ(::utimensat(AT_FDCWD, (dir_ / "art/invocations/inv-old/driver/0001").c_str(), old, 0),
              0);
    fs::create_directories(dir_ / "art/fresh/deep");
    std::ofstream(dir_ / "art/fresh/deep/new.txt") << "n";
    const auto after = list_store_files(s, "invocations/inv-x/driver/0001/out");
    const std::vector<std::string> added = files_added(*first, *after);
    EXPECT_EQ(std::set<std::string>(added.begin(), added.end()),
              (std::set<std::string>{"invocations/inv-old/driver/0001/planted.txt",
                                     "fresh/deep/new.txt"}));
    EXPECT_EQ(after->dirs.at("quiet"), first->dirs.at("quiet"));
}

// [21] The racy rule at the file system's own step: a directory stamped with nanoseconds and
// quiet for 50 ms is trusted (a session's calls are milliseconds apart; with the one-second rule
// every directory of the last second was read again at every call), one whose stamps are whole
// multiples of 10 ms (a FAT or one-second file system) waits 2.1 s, and a file planted after a
// trusted read is still found (its directory's stamps moved).
TEST_F(InvocationTest, ADirectoryQuietForLongerThanATickIsNotReadAgain) {
    EXPECT_EQ(racy_window_ns(1'700'000'000'123'456'789, 1'700'000'000'123'456'789, true),
              20'000'000);
    EXPECT_EQ(racy_window_ns(1'700'000'001'000'000'000, 1'700'000'001'000'000'000, true),
              2'100'000'000);
    EXPECT_EQ(racy_window_ns(1'700'000'001'000'000'000, 1'700'000'001'230'000'001, true),
              20'000'000);
    // Another host's clock (NFS, Lustre) stamps: it may be off this one's by more than a tick.
    EXPECT_EQ(racy_window_ns(1'700'000'000'123'456'789, 1'700'000'000'123'456'789, false),
              2'100'000'000);
    ASSERT_TRUE(is_local_filesystem(filesystem_type(dir_))) << filesystem_type(dir_);
    const store::Store s = store::Store::create(dir_ / "art");
    fs::create_directories(dir_ / "art/invocations/inv-old/driver/0001");
    std::ofstream(dir_ / "art/invocations/inv-old/driver/0001/kept.txt") << "x";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto first = list_store_files(s, "invocations/inv-x/driver/0001/out");
    const std::uint64_t reads = store_directories_read();
    const auto again = list_store_files(s, "invocations/inv-x/driver/0001/out");
    EXPECT_EQ(store_directories_read(), reads);  // every directory came from the cache
    EXPECT_TRUE(files_added(*first, *again).empty());
    std::ofstream(dir_ / "art/invocations/inv-old/driver/0001/planted.txt") << "p";
    const auto after = list_store_files(s, "invocations/inv-x/driver/0001/out");
    EXPECT_EQ(files_added(*first, *after),
              std::vector<std::string>{"invocations/inv-old/driver/0001/planted.txt"});
}

// What was synced while observing, in order: an inode, or a device for a syncfs (observe_syncs).
std::vector<std::pair<dev_t, ino_t>>& synced() {
    static std::vector<std::pair<dev_t, ino_t>> seen;
    return seen;
}

void record_sync(int fd, bool whole_filesystem) {
    struct stat st {};
    if (::fstat(fd, &st) == 0) {
        synced().emplace_back(st.st_dev, whole_filesystem ? 0 : st.st_ino);
    }
}

// [21] A session request's files (its request, process.json, captures and outputs) are made
// durable together when the call ends, then ledgered in one append: nothing is synced while the
// driver works (no event is fsynced), and the call costs one sync of the store's file system and
// one of the ledger. Before: three ledger appends (request, process.json, the rest), each file cko
// wrote fsynced with its directory, an fsync per event: about 13 a request, and the captures and
// outputs were ledgered without ever being fsynced.
TEST_F(InvocationTest, ACallsFilesAreMadeDurableTogetherBeforeTheOneLedgerAppendThatCitesThem) {
    override_syncfs_for_tests(true);
    const store::Store s = store::Store::create(dir_ / "art");
    Invocation inv = Invocation::create(s, "test", Json::object(), Limits{}, nullptr);
    observe_syncs(&record_sync);
    synced().clear();
    const std::uint64_t before = durable_syncs();
    const std::size_t ledger_size = fs::file_size(s.root() / store::kLedger);
    const CallSlot slot = inv.open_call();
    CallOutcome out = inv.begin_call(slot, Json{{"n", 1}});
    inv.event("call_started", Json{{"call", out.number}});
    // What a session driver and the capture of its logs leave.
    put(slot.call_dir / "stdout.txt", "");
    put(slot.call_dir / "stderr.txt", "cko: subject candidate\n");
    put(slot.output_dir / "result.json", "{}");
    put(slot.output_dir / "trace.bin", "t");
    EXPECT_EQ(durable_syncs(), before);
    EXPECT_EQ(fs::file_size(s.root() / store::kLedger), ledger_size);  // nothing ledgered yet
    ProcessResult served;
    served.exited = true;
    inv.end_call(out, served);
    observe_syncs(nullptr);
    override_syncfs_for_tests(std::nullopt);

    struct stat root {};
    struct stat ledger {};
    ASSERT_EQ(::stat(s.root().c_str(), &root), 0);
    ASSERT_EQ(::stat((s.root() / store::kLedger).c_str(), &ledger), 0);
    EXPECT_EQ(durable_syncs() - before, 2U);
    EXPECT_EQ(synced(), (std::vector<std::pair<dev_t, ino_t>>{{root.st_dev, 0},
                                                              {ledger.st_dev, ledger.st_ino}}));
    for (const fs::path& p : {slot.request_path, slot.call_dir / "process.json",
                              slot.call_dir / "stdout.txt", slot.call_dir / "stderr.txt",
                              slot.output_dir / "result.json", slot.output_dir / "trace.bin"}) {
        EXPECT_TRUE(s.is_ledgered(p.lexically_relative(s.root()).string())) << p;
    }
}

TEST_F(InvocationTest, ACallLeavesRequestOutputsProcessRecordAndEvents) {
    const store::Store s = store::Store::create(dir_ / "art");
    Invocation inv = Invocation::create(s, "test", Json{{"x", 1}}, Limits{}, nullptr);
    EXPECT_TRUE(inv.id().starts_with("inv-"));
    CallSpec spec;
    spec.argv = {"/bin/sh", "-c",
                 "echo out; echo err >&2; printf '{}' > \"$(dirname \"$1\")/out/result.json\"",
                 "sh"};
    spec.request = Json{{"format_version", "cko/driver-request-v1"}, {"id", "req"}};
    const CallOutcome out = call_in_next_slot(inv, spec);
    EXPECT_TRUE(out.process.exited);
    EXPECT_EQ(out.process.exit_code, 0);
    EXPECT_EQ(slurp(out.call_dir / "stdout.txt"), "out\n");
    EXPECT_EQ(slurp(out.call_dir / "stderr.txt"), "err\n");
    EXPECT_EQ(out.output_files, std::vector<std::string>{"result.json"});
    // The request file is the document the caller gave, as it is.
    EXPECT_EQ(s.read_record(out.relative_dir + "/request.json"), spec.request);
    inv.finish(InvocationState::succeeded, "ok", Json{{"n", 1}});

    const InvocationStatus st = invocation_status(s, inv.id());
    EXPECT_EQ(st.state, InvocationState::succeeded);
    EXPECT_EQ(st.result["cost"]["driver_calls"], 1);
    const std::string events = slurp(inv.dir() / "events.jsonl");
    for (const char* type :
         {"\"created\"", "\"call_started\"", "\"call_finished\"", "\"finished\""}) {
        EXPECT_NE(events.find(type), std::string::npos) << type;
    }
    const store::FsckReport fsck = store::fsck_store(s);
    EXPECT_FALSE(fsck.damaged()) << fsck.to_text();
    EXPECT_TRUE(fsck.findings.empty())
        << fsck.to_text();  // every file of a finished invocation is ledgered
}

// A slot is the call's place and time, nothing more: its output directory exists, its request file
// not yet (the caller writes what the request says), and its timeout is the command limit.
TEST_F(InvocationTest, AnOpenedSlotHasItsDirectoriesAndItsTimeButNoRequestYet) {
    const store::Store s = store::Store::create(dir_ / "art");
    Limits limits;
    limits.command = std::chrono::seconds(7);
    Invocation inv = Invocation::create(s, "test", Json::object(), limits, nullptr);
    EXPECT_EQ(inv.next_output_dir(), s.root() / store::layout::call_dir(inv.id(), 1) / "out");
    const std::int64_t before = unix_nanoseconds_now();
    const CallSlot slot = inv.open_call();
    EXPECT_EQ(slot.number, 1);
    EXPECT_EQ(slot.relative_dir, store::layout::call_dir(inv.id(), 1));
    EXPECT_EQ(slot.output_dir, s.root() / slot.relative_dir / "out");
    EXPECT_TRUE(fs::is_directory(slot.output_dir));
    EXPECT_EQ(slot.request_path, slot.call_dir / "request.json");
    EXPECT_FALSE(fs::exists(slot.request_path));
    EXPECT_EQ(slot.timeout, std::chrono::seconds(7));
    EXPECT_GE(slot.deadline_unix_ns, before + std::int64_t{7'000'000'000});
    EXPECT_LE(slot.deadline_unix_ns, unix_nanoseconds_now() + std::int64_t{7'000'000'000});
    EXPECT_EQ(inv.open_call().number, 2);
}

TEST_F(InvocationTest, CommandTimeoutKillsTheCallAndSaysSo) {
    const store::Store s = store::Store::create(dir_ / "art");
    Limits limits;
    limits.command = std::chrono::milliseconds(300);
    limits.cleanup = std::chrono::milliseconds(200);
    Invocation inv = Invocation::create(s, "test", Json::object(), limits, nullptr);
    CallSpec spec;
    spec.argv = {"/bin/sh", "-c", "trap '' TERM; sleep 30", "sh"};
    spec.request = Json{{"format_version", "cko/driver-request-v1"}, {"id", "req"}};
    const auto t0 = std::chrono::steady_clock::now();
    const CallOutcome out = call_in_next_slot(inv, spec);
    EXPECT_TRUE(out.process.timed_out);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

// The owner (a forked child standing in for a cko process) dies by SIGKILL in the middle of a call.
// Its watchdog kills what the call left running without anyone looking (issue 11 item 7: it used to
// run on until `status`), and `status` records `lost`.
TEST_F(InvocationTest, DeadOwnerMeansLostAndNoProcessSurvives) {
    const store::Store s = store::Store::create(dir_ / "art");
    const fs::path pid_file = dir_ / "grandchild.pid";
    const fs::path id_file = dir_ / "id";
    const pid_t owner = ::fork();
    ASSERT_GE(owner, 0);
    if (owner == 0) {
        Invocation inv = Invocation::create(s, "test", Json::object(), Limits{}, nullptr);
        std::ofstream(id_file) << inv.id();
        CallSpec spec;
        spec.argv = {"/bin/sh", "-c", "sleep 300 & echo $! > " + pid_file.string() + "; wait",
                     "sh"};
        spec.request = Json{{"format_version", "cko/driver-request-v1"}, {"id", "req"}};
        (void)call_in_next_slot(inv, spec);
        ::_exit(0);
    }
    for (int i = 0; i < 500 && !fs::exists(pid_file); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(fs::exists(pid_file));
    std::string id;
    std::ifstream(id_file) >> id;
    EXPECT_EQ(invocation_status(s, id).state, InvocationState::running);

    ::kill(owner, SIGKILL);
    int status = 0;
    ::waitpid(owner, &status, 0);
    pid_t grandchild = 0;
    std::ifstream(pid_file) >> grandchild;
    bool gone = false;
    for (int i = 0; i < 300 && !gone; ++i) {
        std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
        std::string text;
        std::getline(stat, text);
        gone = text.empty() ||
               text.find(") Z ") != std::string::npos;  // gone, or a zombie awaiting init
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(gone) << "the call outlived its SIGKILLed owner";
    // A read never writes: the dead owner's invocation still reads running, with no result.
    const InvocationStatus read = invocation_status(s, id);
    EXPECT_EQ(read.state, InvocationState::running);
    EXPECT_FALSE(read.owner_alive);
    EXPECT_FALSE(s.exists("invocations/" + id + "/result.json"));
    // Lost detection is the explicit step.
    const InvocationStatus st = detect_lost_invocation(s, id);
    EXPECT_EQ(st.state, InvocationState::lost);

    EXPECT_EQ(invocation_status(s, id).state, InvocationState::lost);  // stable on a second look
}

// A finished invocation's status is its fixed record: the same document while its owner process
// still exits and after it has gone (mcp_sdk's `wait` then `status` differed in owner_alive, true
// then false, when the detached owner of a confirm had not yet exited).
TEST_F(InvocationTest, AFinishedStatusIsTheSameWhetherOrNotItsOwnerLives) {
    const store::Store s = store::Store::create(dir_ / "art");
    const fs::path id_file = dir_ / "id";
    int go[2];
    ASSERT_EQ(::pipe(go), 0);
    const pid_t owner = ::fork();
    ASSERT_GE(owner, 0);
    if (owner == 0) {
        ::close(go[1]);
        Invocation inv = Invocation::create(s, "test", Json::object(), Limits{}, nullptr);
        inv.finish(InvocationState::succeeded, "ok", Json{{"n", 1}});
        std::ofstream(id_file) << inv.id();
        char c = 0;
        (void)::read(go[0], &c, 1);  // lives until the parent has read the status once
        ::_exit(0);
    }
    ::close(go[0]);
    std::string id;
    for (int i = 0; i < 500 && id.empty(); ++i) {
        std::ifstream(id_file) >> id;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_FALSE(id.empty());
    const Json while_alive = invocation_status(s, id).to_json();
    ::close(go[1]);
    int status = 0;
    ::waitpid(owner, &status, 0);
    const Json after_exit = invocation_status(s, id).to_json();
    EXPECT_EQ(while_alive.at("state"), "succeeded");
    EXPECT_FALSE(while_alive.contains("owner_alive")) << while_alive.dump();
    EXPECT_EQ(while_alive, after_exit);
}

// Issue 11 item 1: a directory made before its request.json (a kill or ENOSPC in between) wedged
// the store: every reader failed on it. Creation is staged now; one left by an older cko is skipped
// by readers and noted by fsck.
TEST_F(InvocationTest, AHalfMadeInvocationIsSkippedByReadersAndNotedByFsck) {
    const store::Store s = store::Store::create(dir_ / "art");
    fs::create_directories(s.root() / "invocations" / "inv-0000000000000000" / "driver");
    Invocation inv = Invocation::create(s, "test", Json{{"x", 1}}, Limits{}, nullptr);
    EXPECT_EQ(list_invocations(s), std::vector<std::string>{inv.id()});
    const store::FsckReport r = store::fsck_store(s);
    EXPECT_FALSE(r.damaged()) << r.to_text();
    ASSERT_EQ(r.findings.size(), 1u) << r.to_text();
    EXPECT_EQ(r.findings[0].kind, "half_made");
}

// Issue 11 item 11: `ls` on a root holding only store.json failed with `internal`.
TEST_F(InvocationTest, ARootWithoutAnInvocationsFolderListsNone) {
    const store::Store s = store::Store::create(dir_ / "art");
    fs::remove_all(s.root() / "invocations");
    EXPECT_TRUE(list_invocations(s).empty());
}

// Issue 11 item 2: a driver replacing its output directory with a link made cko chmod and ledger
// files outside the store.
TEST_F(InvocationTest, AnOutputDirectoryReplacedByALinkIsRefusedAndNothingOutsideChanges) {
    const store::Store s = store::Store::create(dir_ / "art");
    put(dir_ / "outside" / "victim.txt", "precious");
    ::chmod((dir_ / "outside" / "victim.txt").c_str(), 0600);
    Invocation inv = Invocation::create(s, "test", Json{{"x", 1}}, Limits{}, nullptr);
    CallSpec spec;
    spec.argv = {"/bin/sh", "-c",
                 "out=\"$(dirname \"$1\")/out\"; rm -rf \"$out\"; ln -s \"$0\" \"$out\"",
                 (dir_ / "outside").string()};
    spec.request = Json{{"format_version", "cko/driver-request-v1"}, {"id", "req"}};
    EXPECT_CKO_ERROR((void)call_in_next_slot(inv, spec), ErrorCode::symlink_refused);
    EXPECT_EQ(fs::status(dir_ / "outside" / "victim.txt").permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_EQ(slurp(s.root() / "ledger.jsonl").find("victim"), std::string::npos);
}

// Issue 18: a file a driver planted in the store outside its output directory, and a link among
// its outputs, were accepted (fsck only noted them). Now each refuses the call, naming the path,
// after the call's own records are written.
TEST_F(InvocationTest, AFilePlantedOutsideTheOutputDirectoryRefusesTheCall) {
    const store::Store s = store::Store::create(dir_ / "art");
    Invocation inv = Invocation::create(s, "test", Json{{"x", 1}}, Limits{}, nullptr);
    CallSpec spec;
    // $1 is the request: its directory is the call's, one level above the output directory.
    spec.argv = {"/bin/sh", "-c", "echo '{}' > \"$(dirname \"$1\")/planted.json\"", "sh"};
    spec.request = Json{{"format_version", "cko/driver-request-v1"}, {"id", "req"}};
    if (const auto e =
            EXPECT_CKO_ERROR((void)call_in_next_slot(inv, spec), ErrorCode::unsafe_output)) {
        const std::string planted = store::layout::call_dir(inv.id(), 1) + "/planted.json";
        EXPECT_EQ(e->details()["paths"], Json::array({planted}));
    }
    EXPECT_TRUE(s.exists(store::layout::call_process(store::layout::call_dir(inv.id(), 1))));
    // A call that writes only into its output directory passes.
    spec.argv = {"/bin/sh", "-c", "echo '{}' > \"$(dirname \"$1\")/out/fine.json\"", "sh"};
    EXPECT_NO_THROW((void)call_in_next_slot(inv, spec));
}

// [21] A call's own request.json, process.json and captures are ledgered when it ends, so the guard
// takes them as cko's until then; a driver planting one where no call is open (a finished
// invocation's call, a later call of its own invocation) is still refused, naming the path.
TEST_F(InvocationTest, ACallFilePlantedWhereNoCallIsOpenRefusesTheCall) {
    const store::Store s = store::Store::create(dir_ / "art");
    std::string finished_id;
    {
        Invocation done = Invocation::create(s, "test", Json{{"x", 0}}, Limits{}, nullptr);
        finished_id = done.id();
        (void)done.finish(InvocationState::succeeded, "done", Json::object());
    }
    Invocation inv = Invocation::create(s, "test", Json{{"x", 1}}, Limits{}, nullptr);
    CallSpec spec;
    spec.request = Json{{"format_version", "cko/driver-request-v1"}, {"id", "req"}};
    const std::string elsewhere = store::layout::call_dir(finished_id, 7) + "/request.json";
    const std::string later = store::layout::call_dir(inv.id(), 9) + "/process.json";
    for (const std::string& planted : {elsewhere, later}) {
        SCOPED_TRACE(planted);
        const fs::path target = s.root() / planted;
        spec.argv = {"/bin/sh", "-c", "mkdir -p \"$(dirname \"$0\")\" && echo '{}' > \"$0\"",
                     target.string()};
        if (const auto e =
                EXPECT_CKO_ERROR((void)call_in_next_slot(inv, spec), ErrorCode::unsafe_output)) {
            EXPECT_EQ(e->details()["paths"], Json::array({planted}));
        }
    }
}

// [21] A file left in the store between two calls (a session driver lives on between them) is
// found by the next call's check: that call's `before` is the listing the last call's check took,
// not one taken after the file appeared (before, such a file was never found). The next call also
// lists the store once, not twice.
TEST_F(InvocationTest, AFileLeftBetweenTwoCallsRefusesTheNextCall) {
    const store::Store s = store::Store::create(dir_ / "art");
    Invocation inv = Invocation::create(s, "test", Json{{"x", 1}}, Limits{}, nullptr);
    CallSpec spec;
    spec.request = Json{{"format_version", "cko/driver-request-v1"}, {"id", "req"}};
    spec.argv = {"/bin/sh", "-c", "echo '{}' > \"$(dirname \"$0\")/out/result.json\""};
    (void)call_in_next_slot(inv, spec);
    (void)call_in_next_slot(inv, spec);  // the files of the first call are no one's plant
    put(s.root() / "planted-between-calls.txt", "x");
    if (const auto e =
            EXPECT_CKO_ERROR((void)call_in_next_slot(inv, spec), ErrorCode::unsafe_output)) {
        EXPECT_EQ(e->details()["paths"], Json::array({"planted-between-calls.txt"}));
    }
}

TEST_F(InvocationTest, ALinkAmongTheOutputsRefusesTheCall) {
    const store::Store s = store::Store::create(dir_ / "art");
    put(dir_ / "outside" / "victim.txt", "precious");
    Invocation inv = Invocation::create(s, "test", Json{{"x", 1}}, Limits{}, nullptr);
    CallSpec spec;
    spec.request = Json{{"format_version", "cko/driver-request-v1"}, {"id", "req"}};
    for (const std::string how : {"ln -s", "ln"}) {
        spec.argv = {"/bin/sh", "-c", how + " \"$0\" \"$(dirname \"$1\")/out/evidence.txt\"",
                     (dir_ / "outside" / "victim.txt").string()};
        SCOPED_TRACE(how);
        EXPECT_CKO_ERROR((void)call_in_next_slot(inv, spec), ErrorCode::unsafe_output,
                         "out/evidence.txt");
    }
    EXPECT_EQ(slurp(dir_ / "outside" / "victim.txt"), "precious");
}

}  // namespace
}  // namespace cko::run
