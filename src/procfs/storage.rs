//! The block device holding a server's data directory, and its counters from
//! `/proc/diskstats` (iostat's r/s, rkB/s, w/s and wkB/s before the division by time), read
//! through the `procfs` crate.
//!
//! The device is the one the data directory's filesystem reports (`st_dev`): a partition
//! counts as itself (`vda1`, its own line in diskstats, not the whole disk: other partitions'
//! traffic stays out), a device-mapper volume as itself (`dm-0`). A filesystem whose `st_dev`
//! is no block device (btrfs, and overlay or tmpfs, which have none) is looked up in the
//! server's mount table: a mount source under `/dev/` (btrfs) names the device; an overlay or
//! tmpfs has none, and no figure is given. The counters are the whole device's: every
//! process's reads and writes on it, not only the server's.

use procfs::Current;
use procfs::process::{MountInfo, Process};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A block device of `/proc/diskstats`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    pub major: u32,
    pub minor: u32,
    /// Its name in `/proc/diskstats` (`vda`, `nvme0n1p2`, `dm-0`).
    pub name: String,
}

/// Cumulative counters of a block device: completed reads and writes, and their bytes
/// (diskstats counts 512-byte sectors whatever the device's own sector size).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeviceCounters {
    pub reads: u64,
    pub read_bytes: u64,
    pub writes: u64,
    pub write_bytes: u64,
}

/// The counters of the device `major:minor` in the lines of a diskstats file.
pub fn counters_in(diskstats: &str, major: u32, minor: u32) -> Option<DeviceCounters> {
    diskstats
        .lines()
        .filter_map(|l| procfs::DiskStat::from_line(l).ok())
        .find(|d| (d.major, d.minor) == (major as i32, minor as i32))
        .map(|d| DeviceCounters {
            reads: d.reads,
            read_bytes: d.sectors_read * 512,
            writes: d.writes,
            write_bytes: d.sectors_written * 512,
        })
}

/// The device's counters now.
pub fn counters(device: &Device) -> Option<DeviceCounters> {
    // One line is wanted: the file is read whole (a few KB) and only that line is parsed.
    let text = std::fs::read_to_string(procfs::DiskStats::PATH).ok()?;
    counters_in(&text, device.major, device.minor)
}

/// The name of `major:minor` in a diskstats file, if it is listed there.
fn name_in(diskstats: &str, major: u32, minor: u32) -> Option<String> {
    diskstats
        .lines()
        .filter_map(|l| procfs::DiskStat::from_line(l).ok())
        .find(|d| (d.major, d.minor) == (major as i32, minor as i32))
        .map(|d| d.name)
}

/// The block device behind the filesystem `major:minor` of a mount table, when that number
/// is no block device itself (btrfs): the mount's source under `/dev/`. `Err` names the
/// filesystem type when it has no device (overlay, tmpfs).
fn mount_source(mounts: &[MountInfo], major: u32, minor: u32) -> Result<String, String> {
    let majmin = format!("{major}:{minor}");
    let mount = mounts.iter().find(|m| m.majmin == majmin).ok_or_else(|| {
        format!("device {majmin} is neither in /proc/diskstats nor in the mount table")
    })?;
    match mount.mount_source.as_deref() {
        Some(src) if src.starts_with("/dev/") => Ok(src.to_string()),
        _ => Err(format!(
            "a filesystem of type {}, which has no block device",
            mount.fs_type
        )),
    }
}

/// `path` as seen by process `pid` (its root directory may differ: chroot, container).
fn in_root_of(pid: i32, path: &Path) -> PathBuf {
    let rel = path.strip_prefix("/").unwrap_or(path);
    PathBuf::from(format!("/proc/{pid}/root")).join(rel)
}

/// The block device holding `dir`, a directory of process `pid` (`None`: its working
/// directory). `Err` says why there is none, in words.
pub fn device_of(pid: i32, dir: Option<&Path>) -> Result<Device, String> {
    let (path, shown) = match dir {
        Some(d) => (in_root_of(pid, d), d.display().to_string()),
        None => (
            PathBuf::from(format!("/proc/{pid}/cwd")),
            format!("the working directory of pid {pid}"),
        ),
    };
    let meta = std::fs::metadata(&path)
        .map_err(|e| format!("cannot read {shown} of server pid {pid}: {e}"))?;
    let dev = meta.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let diskstats = std::fs::read_to_string(procfs::DiskStats::PATH)
        .map_err(|e| format!("cannot read /proc/diskstats: {e}"))?;
    if let Some(name) = name_in(&diskstats, major, minor) {
        return Ok(Device { major, minor, name });
    }
    let mounts = Process::new(pid)
        .and_then(|p| p.mountinfo())
        .map_err(|e| format!("cannot read the mount table of server pid {pid}: {e}"))?;
    let source =
        mount_source(&mounts.0, major, minor).map_err(|why| format!("{shown} is on {why}"))?;
    let rdev = std::fs::metadata(in_root_of(pid, Path::new(&source)))
        .map_err(|e| format!("cannot read {source}, the device of {shown}: {e}"))?
        .rdev();
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    name_in(&diskstats, major, minor)
        .map(|name| Device { major, minor, name })
        .ok_or_else(|| format!("{source}, the device of {shown}, is not in /proc/diskstats"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DISKSTATS: &str = "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
   8       0 sda 9000 10 72000 500 400 20 6400 300 0 700 800 0 0 0 0 0 0
   8       1 sda1 1200 3 9600 40 100 1 1600 30 0 60 70 0 0 0 0 0 0
 253       0 dm-0 50 0 800 5 7 0 56 1 0 6 6
";

    #[test]
    fn diskstats_lines_give_reads_and_bytes_through_the_crate() {
        let c = counters_in(DISKSTATS, 8, 0).unwrap();
        assert_eq!(
            c,
            DeviceCounters {
                reads: 9000,
                read_bytes: 72000 * 512,
                writes: 400,
                write_bytes: 6400 * 512,
            }
        );
        // A kernel before 4.18 has no discard or flush columns: still read.
        assert_eq!(counters_in(DISKSTATS, 253, 0).unwrap().writes, 7);
        assert_eq!(counters_in(DISKSTATS, 9, 9), None);
        assert_eq!(counters_in("", 8, 0), None);
    }

    #[test]
    fn a_partition_is_its_own_device() {
        // The data directory's st_dev names the partition: its own line, not the disk's.
        assert_eq!(name_in(DISKSTATS, 8, 1).as_deref(), Some("sda1"));
        assert_eq!(counters_in(DISKSTATS, 8, 1).unwrap().reads, 1200);
    }

    fn mount(majmin: &str, fs: &str, source: &str) -> MountInfo {
        MountInfo::from_line(&format!(
            "36 35 {majmin} / /data rw,noatime shared:1 - {fs} {source} rw"
        ))
        .unwrap()
    }

    #[test]
    fn a_filesystem_without_a_block_device_says_so() {
        let mounts = [
            mount("0:52", "overlay", "overlay"),
            mount("0:60", "tmpfs", "tmpfs"),
            mount("0:33", "btrfs", "/dev/nvme0n1p2"),
        ];
        assert_eq!(
            mount_source(&mounts, 0, 52).unwrap_err(),
            "a filesystem of type overlay, which has no block device"
        );
        assert!(mount_source(&mounts, 0, 60).unwrap_err().contains("tmpfs"));
        assert_eq!(mount_source(&mounts, 0, 33).unwrap(), "/dev/nvme0n1p2");
        assert!(mount_source(&mounts, 0, 99).is_err());
    }

    #[test]
    fn own_directories_are_found_or_refused_in_words() {
        let me = std::process::id() as i32;
        // This machine's working directory: a device, or a reason (a tmpfs or overlay).
        match device_of(me, None) {
            Ok(d) => assert!(counters(&d).is_some(), "{d:?}"),
            Err(why) => assert!(
                why.contains("filesystem") || why.contains("device"),
                "{why}"
            ),
        }
        // /proc is a filesystem without a device.
        let why = device_of(me, Some(Path::new("/proc"))).unwrap_err();
        assert!(
            why.contains("type proc, which has no block device"),
            "{why}"
        );
        let why = device_of(me, Some(Path::new("/no/such/dir"))).unwrap_err();
        assert!(why.starts_with("cannot read /no/such/dir"), "{why}");
    }
}
