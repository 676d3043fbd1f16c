//! Mounts the page in the browser; natively, runs the command line (`dpcalc check`). Everything
//! else lives in the library.

#[cfg(all(target_arch = "wasm32", feature = "app"))]
fn main() {
    dpcalc::mount();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    dpcalc::cli::main()
}

#[cfg(all(target_arch = "wasm32", not(feature = "app")))]
fn main() {}
