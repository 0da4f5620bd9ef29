variable "hosts" {
  description = "Existing bare-metal nodes, one entry per data disk: how to reach them (key_file is a path on the controller, never the key) and where and what the data disk is."
  type = list(object({
    name        = string
    address     = string
    port        = optional(number, 22)
    user        = optional(string)
    key_file    = optional(string)
    data_dir    = optional(string, "/var/tmp/lsmbench")
    device      = optional(string, "auto")
    disk        = optional(string, "ssd")
    remote_root = optional(string)
  }))

  validation {
    condition     = length(var.hosts) > 0
    error_message = "Give at least one host."
  }
  validation {
    condition     = alltrue([for h in var.hosts : contains(["ssd", "hdd"], h.disk)])
    error_message = "Each host's disk must be \"ssd\" or \"hdd\"."
  }
  validation {
    condition     = length(distinct([for h in var.hosts : h.name])) == length(var.hosts)
    error_message = "Host names must be unique (a node with two data disks needs one name per disk)."
  }
  validation {
    condition     = alltrue([for h in var.hosts : h.port >= 1 && h.port <= 65535])
    error_message = "Each host's port must be in 1..65535."
  }
}

variable "tags" {
  description = "Labels recorded with each node (shown by `lsmbench testbed status`)."
  type        = map(string)
  default     = {}
}
