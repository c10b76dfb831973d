//! What the CLI's test binaries share.

use std::path::{Path, PathBuf};

/// A test's path in the temp dir (`csigsim-NAME-PID`), emptied first and
/// removed when the test ends, passed or not, with the lock file a run
/// into it leaves beside it (`.NAME.lock`, docs/robustness.md).
pub struct TmpPath(PathBuf);

impl TmpPath {
    pub fn new(name: &str) -> TmpPath {
        let d = std::env::temp_dir().join(format!("csigsim-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        TmpPath(d)
    }
}

impl std::ops::Deref for TmpPath {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for TmpPath {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for TmpPath {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for TmpPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        let _ = std::fs::remove_file(&self.0);
        if let (Some(parent), Some(name)) = (self.0.parent(), self.0.file_name()) {
            let _ = std::fs::remove_file(parent.join(format!(".{}.lock", name.to_string_lossy())));
        }
    }
}
