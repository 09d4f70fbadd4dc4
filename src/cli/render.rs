//! Placeholder until the render library's own CLI file lands.
pub use crate::render::RenderArgs as Args;
/// `ribbridge render`.
pub fn run(args: Args) -> std::process::ExitCode {
    crate::render::command(args)
}
