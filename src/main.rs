//! Mounts the page; everything else lives in the library.

fn main() {
    #[cfg(target_arch = "wasm32")]
    dpcalc::mount();
}
