print("ledger")
