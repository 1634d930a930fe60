print("ledger-bench")
