project = "edge"

variable "token" {
  type    = string
  default = "plain"
}

service "api" {
  port = 8080
  frontend {
    rule = "Path:/api"
    forward_auth {
      address = "http://127.0.0.1:8080/auth"
    }
    proof {
      token = var.token # ERROR: Proof token not sensitive
    }
  }
}
