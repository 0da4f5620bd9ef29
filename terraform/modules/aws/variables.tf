variable "name" {
  description = "The testbed's name: prefixes resource names and is the `lsmbench:testbed` tag that `lsmbench testbed status` finds the nodes by."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9-]{0,30}$", var.name))
    error_message = "name: lowercase letters, digits and '-', at most 31 characters."
  }
}

variable "region" {
  description = "AWS region of the nodes."
  type        = string
}

variable "controller_cidr" {
  description = "The controller's public address as a CIDR (e.g. 203.0.113.7/32): the only source admitted to SSH."
  type        = string

  validation {
    condition     = can(cidrhost(var.controller_cidr, 0)) && !contains(["0.0.0.0/0", "::/0"], var.controller_cidr)
    error_message = "controller_cidr must be a CIDR that is not the whole Internet."
  }
}

variable "ssh_public_key_file" {
  description = "Path (on the controller) of the SSH public key installed on the nodes as a new key pair."
  type        = string
}

variable "ssh_private_key_file" {
  description = "Path (on the controller) of the matching private key; only recorded in the inventory output, never read."
  type        = string
}

variable "ssh_user" {
  description = "Login user of the image (admin on Debian images)."
  type        = string
  default     = "admin"
}

variable "ami_id" {
  description = "Image for the nodes; null: the newest official Debian 12 amd64 image."
  type        = string
  default     = null
}

variable "subnet_id" {
  description = "Subnet for the nodes; null: the default VPC's first subnet in the chosen zone."
  type        = string
  default     = null
}

variable "availability_zone" {
  description = "Zone for the nodes and their HDD volumes; null: the region's first zone."
  type        = string
  default     = null
}

variable "ssd_nodes" {
  description = "Number of nodes whose data disk is the instance-store NVMe SSD."
  type        = number
  default     = 1

  validation {
    condition     = var.ssd_nodes >= 0 && var.ssd_nodes <= 32 && floor(var.ssd_nodes) == var.ssd_nodes
    error_message = "ssd_nodes must be a whole number in 0..32."
  }
}

variable "ssd_instance_type" {
  description = "Instance type with instance-store NVMe (e.g. i4i.large, m6id.large)."
  type        = string
  default     = "i4i.large"
}

variable "hdd_nodes" {
  description = "Number of nodes whose data disk is a throughput-optimized HDD (st1) volume."
  type        = number
  default     = 0

  validation {
    condition     = var.hdd_nodes >= 0 && var.hdd_nodes <= 32 && floor(var.hdd_nodes) == var.hdd_nodes
    error_message = "hdd_nodes must be a whole number in 0..32."
  }
}

variable "hdd_instance_type" {
  description = "Instance type of the HDD nodes."
  type        = string
  default     = "m6i.large"
}

variable "hdd_volume_gb" {
  description = "Size of each st1 volume in GiB (st1's minimum is 125)."
  type        = number
  default     = 500

  validation {
    condition     = var.hdd_volume_gb >= 125 && var.hdd_volume_gb <= 16384
    error_message = "hdd_volume_gb must be in 125..16384 (st1 limits)."
  }
}

variable "expiry_hours" {
  description = "Optional expiry: each node powers off and is terminated this many hours after boot (the `lsmbench:expires` tag says when); null keeps the nodes until `lsmbench testbed down`."
  type        = number
  default     = null

  validation {
    condition     = var.expiry_hours == null || try(var.expiry_hours > 0 && var.expiry_hours <= 720, false)
    error_message = "expiry_hours must be null or in (0, 720]."
  }
}

variable "tags" {
  description = "Extra tags for every resource."
  type        = map(string)
  default     = {}
}
