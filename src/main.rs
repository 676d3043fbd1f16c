//! Mounts the page; everything else lives in the library.

fn main() {
    #[cfg(all(target_arch = "wasm32", feature = "app"))]
    dpcalc::mount();
}
