//! Native JFrog Platform REST client.
