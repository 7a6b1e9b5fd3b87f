project = "edge"

service "api" {
  port = 8080
  check "script" { # ERROR: Check without an interval
    args = ["/usr/local/bin/check.sh"]
  }
}
