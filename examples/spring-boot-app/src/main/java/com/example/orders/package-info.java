/** The example application of docs/spring-boot.md: a small orders API rate-limited by the Tollgate starter. */
package com.example.orders;
