"use strict";
// An organisation pack as `pulumi policy new awsguard-javascript` makes it, every policy mandatory.
const { AwsGuard } = require("@pulumi/awsguard");

new AwsGuard({ all: "mandatory" });
