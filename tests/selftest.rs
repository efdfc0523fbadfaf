//! The kill matrix as a test: every check passes against the clean mock, every catalogued fault is
//! caught by at least one check, and every scored check is killed by at least one fault (or listed,
//! with its reason, in mock-peer/unkillable.json). A fault file that no check catches fails this
//! test with a message naming the fault.

use a2a_conform::commands::selftest::{self, SelftestOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_check_can_fail_and_every_fault_is_caught() {
    // A debug build spends CPU where a release build waits: fewer checks at once per run.
    let opts = SelftestOptions { jobs: 8, ..SelftestOptions::default() };
    let matrix = selftest::run(&opts).await.expect("the matrix runs");
    println!("{}", matrix.summary());
    assert!(matrix.faults >= 60, "the catalogue has {} faults; the issue asks for at least 60", matrix.faults);
    assert!(matrix.ok(), "the kill matrix has gaps:\n{}", matrix.summary());
}
