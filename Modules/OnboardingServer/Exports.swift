@_exported import AccountSync
