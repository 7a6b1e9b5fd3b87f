project = "edge"

# A default that breaks its own rule is refused offline, at the variable,
# with the rule's message; a rule that passes says nothing.
variable "api_port" { # ERROR: Invalid value for variable
  type    = number
  default = 80

  validation {
    condition     = var.api_port >= 1024 && var.api_port <= 65535
    error_message = "api_port is an unprivileged port: 1024 to 65535."
  }
}

variable "api_path" {
  type    = string
  default = "/api"

  validation {
    condition     = substr(var.api_path, 0, 1) == "/"
    error_message = "api_path starts with \"/\"."
  }
}

# A condition may refer only to its own variable.
variable "gate" {
  default = "on"

  validation {
    condition     = var.api_path == "/api" # ERROR: Unsupported attribute
    error_message = "gate depends on the path."
  }
}

service "api" {
  port = var.api_port

  frontend {
    rule = "PathPrefix:${var.api_path}"
  }
}
