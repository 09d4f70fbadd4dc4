//! The cluster's answer to "which nodes serve VIP X", from Prometheus
//! (or OpenShift's Thanos querier), which already holds every node's view
//! and the router's: `ribbridge cluster`.
//!
//! - [`query`]: the Prometheus HTTP API client (instant queries only,
//!   `/api/v1/query`; bearer token, CA file), on the crate's hyper and
//!   rustls.
//! - [`join`]: the pure join of the queries' answers into a [`Picture`]:
//!   per VIP, the router's paths beside the nodes advertising it, a row
//!   per node (state, writer, backend, address, heal, drain, scraped), the
//!   problems, and a verdict with `status`'s exit codes.
//! - [`render`]: the table, and the change lines of `--watch`.
//!
//! [`look`] sends every query of [`join::queries`] at once and joins them.

pub mod join;
pub mod query;
pub mod render;

pub use join::{Answers, Picture, Scope, Verdict};
pub use query::{QueryError, Source, SourceError, SourceOptions};

/// Ask Prometheus every query of the picture and join the answers. The
/// first query (`up`) is evaluated at Prometheus' now; the others then
/// at that same time (concurrently, each on its own connection), so that
/// the picture is of one moment: a node going down between two queries
/// cannot show as scraped without its series. The first failed query is
/// the error: a picture from part of the answers could show a node as
/// fine that is not.
pub async fn look(source: &Source, scope: &Scope) -> Result<Picture, QueryError> {
    let qs = join::queries(scope);
    let mut all = Answers::new();
    let Some((first, rest)) = qs.split_first() else {
        return Ok(join::join(scope, &all));
    };
    let head = source.instant(&first.promql).await?;
    let at = head.first().map(|s| s.time);
    all.insert(first.q, head);
    let answers =
        futures::future::join_all(rest.iter().map(|q| source.instant_at(&q.promql, at))).await;
    for (q, a) in rest.iter().zip(answers) {
        all.insert(q.q, a?);
    }
    Ok(join::join(scope, &all))
}
