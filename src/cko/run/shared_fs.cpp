// flock coherence by filesystem type and mount options: NFS (local_lock, nolock), Lustre (flock),
// the rest.
#include "cko/run/shared_fs.hpp"

#include <fmt/format.h>

#include <sys/vfs.h>
#include <fstream>
#include <set>
#include <sstream>

namespace cko::run {
namespace fs = std::filesystem;
namespace {

std::string type_name(long type) {
    switch (static_cast<unsigned long>(type)) {
    case 0x6969UL:
        return "nfs";
    case 0x0BD00BD0UL:
        return "lustre";
    case 0x47504653UL:
        return "gpfs";
    case 0x00C36400UL:
        return "ceph";
    case 0x19830326UL:
        return "beegfs";
    case 0xFF534D42UL:
        return "cifs";
    case 0xFE534D42UL:
        return "smb2";
    case 0x01021997UL:
        return "9p";
    case 0x65735546UL:
        return "fuse";
    case 0xEF53UL:
        return "ext4";
    case 0x58465342UL:
        return "xfs";
    case 0x9123683EUL:
        return "btrfs";
    case 0x01021994UL:
        return "tmpfs";
    case 0x794C7630UL:
        return "overlay";
    case 0x2FC12FC1UL:
        return "zfs";
    default:
        return fmt::format("0x{:x}", static_cast<unsigned long>(type));
    }
}

std::set<std::string> option_set(const std::string& options) {
    std::set<std::string> set;
    std::istringstream in(options);
    std::string o;
    while (std::getline(in, o, ',')) {
        set.insert(o);
    }
    return set;
}

}  // namespace

Json LockCoherence::to_json() const {
    return Json{{"fs_type", fs_type},
                {"mount_point", mount_point},
                {"mount_options", mount_options},
                {"coherent_flock", coherent ? Json(*coherent) : Json(nullptr)},
                {"reason", reason}};
}

LockCoherence judge_lock_coherence(const std::string& type, const std::string& options) {
    LockCoherence c;
    c.fs_type = type;
    c.mount_options = options;
    const auto o = option_set(options);
    if (type == "nfs") {
        if (o.count("nolock") != 0 || o.count("local_lock=flock") != 0 ||
            o.count("local_lock=all") != 0) {
            c.coherent = false;
            c.reason =
                "NFS mounted with nolock or local_lock=flock/all: flock excludes only processes on "
                "the same "
                "client; remount without them (the default local_lock=none sends flock to the "
                "server)";
        } else {
            c.coherent = true;
            c.reason =
                "NFS: since Linux 2.6.12 flock is sent to the server as a whole-file byte-range "
                "lock (NLM for "
                "v3, the protocol's own locks for v4), so it excludes other clients";
        }
    } else if (type == "lustre") {
        if (o.count("flock") != 0) {
            c.coherent = true;
            c.reason = "Lustre mounted with -o flock: locks are coherent across all clients";
        } else {
            c.coherent = false;
            c.reason =
                o.count("localflock") != 0
                    ? "Lustre mounted with localflock: flock is coherent on one node only; mount "
                      "with -o flock"
                    : "Lustre without -o flock: flock fails or is node-local; mount with -o flock";
        }
    } else if (is_local_filesystem(type)) {
        c.coherent = true;
        c.reason = fmt::format(
            "{} is a local filesystem: flock is correct on this host, and compute nodes can use "
            "the store only if this host is the whole cluster (cko checks that each job could "
            "write into the store)",
            type);
    } else if (type == "fuse" || type == "9p") {
        c.coherent = false;
        c.reason = fmt::format(
            "{}: flock is handled by the local kernel unless the filesystem implements it, so "
            "it does not exclude other nodes; put the store on NFS (default locking) or Lustre "
            "-o flock",
            type);
    } else {
        c.reason = fmt::format(
            "{}: cko does not know whether flock on it excludes other nodes (GPFS, CephFS, BeeGFS "
            "with tuneUseGlobalFileLocks and SMB depend on their configuration); see docs/slurm.md",
            type);
    }
    return c;
}

std::string filesystem_type(const fs::path& path) {
    struct statfs st {};
    return ::statfs(path.c_str(), &st) == 0 ? type_name(static_cast<long>(st.f_type)) : "unknown";
}

bool is_local_filesystem(const std::string& fs_type) {
    return fs_type == "ext4" || fs_type == "xfs" || fs_type == "btrfs" || fs_type == "tmpfs" ||
           fs_type == "overlay" || fs_type == "zfs";
}

LockCoherence lock_coherence(const fs::path& path) {
    const std::string type = filesystem_type(path);
    // The longest mount point that is a prefix of the path: its super options carry local_lock etc.
    std::string best_point;
    std::string best_options;
    std::error_code ec;
    const std::string p = fs::weakly_canonical(path, ec).string();
    std::ifstream in("/proc/self/mountinfo");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string id, parent, devno, root, point, mount_opts;
        f >> id >> parent >> devno >> root >> point >> mount_opts;
        std::string word;
        while (f >> word && word != "-") {
        }
        std::string fstype, source, super_opts;
        f >> fstype >> source >> super_opts;
        const bool prefix = p == point || point == "/" ||
                            (p.size() > point.size() && p.compare(0, point.size(), point) == 0 &&
                             p[point.size()] == '/');
        if (prefix && point.size() >= best_point.size()) {
            best_point = point;
            best_options = mount_opts + "," + super_opts;
        }
    }
    LockCoherence c = judge_lock_coherence(type, best_options);
    c.mount_point = best_point;
    return c;
}

}  // namespace cko::run
