/// The OpenAPI 3.1 description of the HTTP API, served at /openapi.json.
enum OpenAPIDocument {
    static let json: String = #"""
    {
      "openapi": "3.1.0",
      "info": {
        "title": "ledger",
        "version": "1.0.0",
        "description": "An append-only payment ledger for three payment products (the web3 crypto gateway, the Banxa fiat on-ramp and the BankPay ACH SDK). Provider webhooks, query results, operator corrections and SDK callbacks are stored as events in PostgreSQL; each order's state (the read model) is a pure function of its events.\n\nConventions:\n- JSON in and out, UTF-8. Errors are `application/problem+json` (RFC 9457: `type`, `title`, `status`, `detail`).\n- Times are RFC 3339 in UTC with `Z`. Amounts are decimal strings (`\"40\"`, `\"0.015\"`), never JSON numbers in responses.\n- `{no}` is a merchantOrderNo: 1-64 characters of `A-Z a-z 0-9 . _ : -`.\n\nAuthentication: every route except the two webhooks and the four operations routes takes `Authorization: Bearer TOKEN`. A token carries one role (created with `ledger token create --role ROLE --name NAME`, stored hashed):\n- `ingest`: the merchant backend. Registers orders, reports query observations, relays SDK callbacks, mints client tokens, reads one order (`GET /v1/orders/{no}`, emails masked).\n- `support`: reads orders, lists and timelines, emails masked.\n- `auditor`: everything support may, unmasked (including raw bodies), plus corrections and the ledger head; also exports.\n- `accountant`: exports.\n- `client`: a token minted for an app, scoped to one order (it may only relay SDK callbacks for that order) or, beyond http-api.md, to one BankPay enrollment (it may only relay that enrollment's callbacks); it expires.\nMissing or unknown token: 401. Known token with the wrong role, or a client token for another order or enrollment: 403. Each operation lists its roles in its description and in the `x-roles` extension (an empty array means no bearer token is used).\n\nWebhooks authenticate by the provider's signature instead of a token (see the webhook operations and the `web3Signature` / `banxaSignature` schemes). A delivery that fails verification is answered 401 and kept byte for byte in a quarantine of rejected deliveries, never in the ledger.\n\nDurability: a 2xx on any write means the event is committed in PostgreSQL. When the database cannot be reached the answer is 503 with `Retry-After`, never a 2xx and never a hang past the request timeout. A replayed write with the same content answers 200 with `\"duplicate\": true` and appends nothing new.\n\nLimits on every route: a body over `LEDGER_MAX_BODY` (default 1 MiB) gets 413; request-smuggling shapes (conflicting `Content-Length` / `Transfer-Encoding` and the like) get 400 and the connection is closed; an unknown path gets 404 and a wrong method 405 with `Allow`, all as problem+json. A request line and headers over 8 KiB in all, or over 100 header fields, get 431; a NUL byte in the request target or a header value gets 400. A few malformed heads are answered by the HTTP library itself with a short HTML body, not problem+json (see README.md, Known gaps); in production the nginx front answers those first."
      },
      "servers": [
        {
          "url": "http://127.0.0.1:8080"
        }
      ],
      "security": [
        {
          "bearer": []
        }
      ],
      "tags": [
        {
          "name": "ingestion",
          "description": "Webhooks, order registration, query observations, SDK callbacks and client tokens."
        },
        {
          "name": "orders",
          "description": "Queries for support staff."
        },
        {
          "name": "audit",
          "description": "Corrections and the ledger head (auditor)."
        },
        {
          "name": "exports",
          "description": "Exports for accounting (accountant, auditor)."
        },
        {
          "name": "operations",
          "description": "Health, readiness, metrics and this document; no token."
        }
      ],
      "paths": {
        "/v1/webhooks/web3": {
          "post": {
            "operationId": "receiveWeb3Webhook",
            "summary": "Receive a web3 gateway payment callback",
            "description": "The web3 gateway's callback to `notifyUrl`. Authenticated by `X-Pay-Timestamp` and `X-Pay-Signature` (HMAC-SHA256 over the timestamp string followed by the raw body, keyed with the merchant API key; several keys accepted for rotation; timestamps outside the tolerance are rejected), not by a bearer token. The body must be JSON with the order reference and the status; it is stored byte for byte beside its parsed form. Fields the ledger does not map are kept whatever they hold: where jsonb cannot hold a part of the body (`\\u0000`, a lone surrogate, nesting deeper than 64, a number beyond PostgreSQL numeric, a repeated key), the delivery is still stored and the event's metadata lists each part under `leftOut`. A correctly signed delivery answered 400 is kept in the quarantine with its reason. A webhook for an order never registered is still stored: the order appears with what the webhook says. A redelivery of the same content (even with a new timestamp) answers 200 with `duplicate: true` and appends nothing. The 200 is sent only after the event is committed.\n\nNo bearer token.",
            "tags": [
              "ingestion"
            ],
            "x-roles": [],
            "security": [],
            "parameters": [
              {
                "$ref": "#/components/parameters/Web3Timestamp"
              },
              {
                "$ref": "#/components/parameters/Web3Signature"
              }
            ],
            "requestBody": {
              "required": true,
              "description": "The gateway's callback body, exactly as sent (the signature covers these bytes).",
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/Web3Webhook"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "Stored (or recognised as a redelivery).",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/WebhookAck"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "413": {
                "$ref": "#/components/responses/PayloadTooLarge"
              },
              "503": {
                "$ref": "#/components/responses/Unavailable"
              }
            },
            "x-authentication": "web3Signature"
          }
        },
        "/v1/webhooks/banxa": {
          "post": {
            "operationId": "receiveBanxaWebhook",
            "summary": "Receive a Banxa order webhook",
            "description": "Banxa's order webhook (v2). Authenticated by `Authorization: Bearer API_KEY:SIGNATURE:NONCE` (HMAC-SHA256 with the API secret over `POST\\n/v1/webhooks/banxa\\n` + NONCE + `\\n` + raw body; nonces outside the tolerance are rejected), not by a ledger bearer token. The body must be JSON with the order reference and the status; it is stored byte for byte beside its parsed form. Fields the ledger does not map are kept whatever they hold: where jsonb cannot hold a part of the body (`\\u0000`, a lone surrogate, nesting deeper than 64, a number beyond PostgreSQL numeric, a repeated key), the delivery is still stored and the event's metadata lists each part under `leftOut`. A correctly signed delivery answered 400 is kept in the quarantine with its reason. A webhook for an order never registered is still stored: the order appears with what the webhook says. A redelivery of the same content (even with a new timestamp) answers 200 with `duplicate: true` and appends nothing. The 200 is sent only after the event is committed.\n\nNo bearer token.",
            "tags": [
              "ingestion"
            ],
            "x-roles": [],
            "security": [],
            "parameters": [
              {
                "$ref": "#/components/parameters/BanxaAuthorization"
              }
            ],
            "requestBody": {
              "required": true,
              "description": "Banxa's webhook body, exactly as sent (the signature covers these bytes).",
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/BanxaWebhook"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "Stored (or recognised as a redelivery).",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/WebhookAck"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "413": {
                "$ref": "#/components/responses/PayloadTooLarge"
              },
              "503": {
                "$ref": "#/components/responses/Unavailable"
              }
            },
            "x-authentication": "banxaSignature"
          }
        },
        "/v1/orders": {
          "post": {
            "operationId": "registerOrder",
            "summary": "Register an order",
            "description": "The merchant backend reports an order it created with a provider. `merchantOrderNo` is the idempotency key: 201 with the order when new; 200 with the same content when that content was registered before; 409 when the merchantOrderNo exists with other content (amounts compare by value, so `40` and `40.00` are the same).\n\nRoles: `ingest`.",
            "tags": [
              "ingestion"
            ],
            "x-roles": [
              "ingest"
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/OrderRegistration"
                  }
                }
              }
            },
            "responses": {
              "201": {
                "description": "Registered: the order's state, with \"duplicate\": false.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/RegisteredOrder"
                    }
                  }
                }
              },
              "200": {
                "description": "Already registered with the same content: the order's state, with \"duplicate\": true; nothing appended.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/RegisteredOrder"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "413": {
                "$ref": "#/components/responses/PayloadTooLarge"
              },
              "503": {
                "$ref": "#/components/responses/Unavailable"
              }
            }
          },
          "get": {
            "operationId": "listOrders",
            "summary": "List and search orders",
            "description": "Orders, newest update first, with keyset pagination: pass the `nextCursor` of one page as `cursor` to get the next. Filters combine with AND; an unknown query parameter is 400. E-mail addresses are masked for `support`.\n\nRoles: `support`, `auditor`.",
            "tags": [
              "orders"
            ],
            "x-roles": [
              "support",
              "auditor"
            ],
            "parameters": [
              {
                "name": "status",
                "in": "query",
                "description": "Only orders with this status code.",
                "schema": {
                  "$ref": "#/components/schemas/StatusCode"
                }
              },
              {
                "name": "paid",
                "in": "query",
                "description": "Only paid (`true`) or unpaid (`false`) orders.",
                "schema": {
                  "type": "boolean"
                }
              },
              {
                "name": "attention",
                "in": "query",
                "description": "Only orders that need (`true`) or do not need (`false`) attention.",
                "schema": {
                  "type": "boolean"
                }
              },
              {
                "name": "provider",
                "in": "query",
                "description": "Only orders of this provider.",
                "schema": {
                  "type": "string",
                  "minLength": 1,
                  "maxLength": 64
                },
                "example": "web3"
              },
              {
                "name": "updatedFrom",
                "in": "query",
                "description": "Only orders updated at or after this time (inclusive): an RFC 3339 time or a date (00:00 UTC).",
                "schema": {
                  "type": "string",
                  "anyOf": [
                    {
                      "format": "date-time"
                    },
                    {
                      "format": "date"
                    }
                  ]
                }
              },
              {
                "name": "updatedTo",
                "in": "query",
                "description": "Only orders updated before this time (exclusive): an RFC 3339 time or a date (00:00 UTC).",
                "schema": {
                  "type": "string",
                  "anyOf": [
                    {
                      "format": "date-time"
                    },
                    {
                      "format": "date"
                    }
                  ]
                }
              },
              {
                "name": "q",
                "in": "query",
                "description": "Exact match on merchantOrderNo, providerOrderId, txHash or externalCustomerId.",
                "schema": {
                  "type": "string",
                  "minLength": 1,
                  "maxLength": 256
                }
              },
              {
                "name": "limit",
                "in": "query",
                "description": "Page size.",
                "schema": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 500,
                  "default": 50
                }
              },
              {
                "name": "cursor",
                "in": "query",
                "description": "The opaque `nextCursor` of the previous page.",
                "schema": {
                  "type": "string"
                }
              }
            ],
            "responses": {
              "200": {
                "description": "One page of orders.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/OrderList"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "503": {
                "$ref": "#/components/responses/Unavailable"
              }
            }
          }
        },
        "/v1/orders/{no}": {
          "parameters": [
            {
              "$ref": "#/components/parameters/OrderNo"
            }
          ],
          "get": {
            "operationId": "getOrder",
            "summary": "Read one order",
            "description": "The order read model. With `asOf`, the state as the ledger knew it at that time (events recorded up to and including it). E-mail addresses are masked for `support` and `ingest`; `auditor` sees them unmasked.\n\nRoles: `support`, `auditor`, `ingest`.",
            "tags": [
              "orders"
            ],
            "x-roles": [
              "support",
              "auditor",
              "ingest"
            ],
            "parameters": [
              {
                "name": "asOf",
                "in": "query",
                "description": "A past time (RFC 3339, or a date meaning 00:00 UTC): answer with the state as of then. 404 when the order was not yet known at that time.",
                "schema": {
                  "type": "string",
                  "anyOf": [
                    {
                      "format": "date-time"
                    },
                    {
                      "format": "date"
                    }
                  ]
                },
                "example": "2026-11-01T12:00:00Z"
              }
            ],
            "responses": {
              "200": {
                "description": "The order.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Order"
                    },
                    "example": {
                      "merchantOrderNo": "ORD-2026-000123",
                      "provider": "web3",
                      "status": 3,
                      "statusName": "paid",
                      "paid": true,
                      "attention": false,
                      "latePayment": false,
                      "refunded": false,
                      "refundAmount": null,
                      "refundAsset": null,
                      "refundedAt": null,
                      "expectedAmount": "40",
                      "paidAmount": "40",
                      "asset": "USDT",
                      "fiatCurrency": null,
                      "fiatAmount": null,
                      "externalCustomerId": "j***@example.com",
                      "providerOrderId": "PAY202611010001",
                      "txHash": "0x5f2c9e0d6b7a1c3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e",
                      "createdAt": "2026-11-01T12:00:00Z",
                      "updatedAt": "2026-11-01T12:03:10Z",
                      "paidAt": "2026-11-01T12:03:09Z",
                      "lastClientSignal": null,
                      "conflicts": [],
                      "eventCount": 3,
                      "lastPosition": 1042
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "503": {
                "$ref": "#/components/responses/Unavailable"
              }
            }
          }
        },
        "/v1/orders/{no}/events": {
          "parameters": [
            {
              "$ref": "#/components/parameters/OrderNo"
            }
          ],
          "get": {
            "operationId": "getOrderTimeline",
            "summary": "Read an order's timeline",
            "description": "Every event of the order, oldest first, with the status after each. Raw bodies (`raw`), metadata and hashes only for `auditor`; e-mail addresses masked for `support`. 404 when the order has no events.\n\nRoles: `support`, `auditor`.",
            "tags": [
              "orders"
            ],
            "x-roles": [
              "support",
              "auditor"
            ],
            "responses": {
              "200": {
                "description": "The timeline.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Timeline"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "503": {
                "$ref": "#/components/responses/Unavailable"
              }
            }
          }
        },
        "/v1/orders/{no}/observations": {
          "parameters": [
            {
              "$ref": "#/components/parameters/OrderNo"
            },
            {
              "$ref": "#/components/parameters/IdempotencyKey"
            }
          ],
          "post": {
            "operationId": "recordObservation",
            "summary": "Report a provider query result",
            "description": "A provider order-query response that the merchant backend fetched, recorded as an authoritative `query` observation. For a provider without an adapter the response must carry `status` (1-6). The same response for the same time again answers 200 with `duplicate: true`.\n\nRoles: `ingest`.",
            "tags": [
              "ingestion"
            ],
            "x-roles": [
              "ingest"
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/Observation"
                  }
                }
              }
            },
            "responses": {
              "201": {
                "description": "Recorded.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/OrderEventReceipt"
                    }
                  }
                }
              },
              "200": {
                "description": "Already recorded (`duplicate: true`); nothing appended.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/OrderEventReceipt"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "413": {
                "$ref": "#/components/responses/PayloadTooLarge"
              },
              "503": {
                "$ref": "#/components/responses/Unavailable"
              }
            }
          }
        },
        "/v1/orders/{no}/client-events": {
          "parameters": [
            {
              "$ref": "#/components/parameters/OrderNo"
            }
          ],
          "post": {
            "operationId": "relayOrderClientEvent",
            "summary": "Relay an SDK callback for an order",
            "description": "An SDK callback from the app (Banxa delegate callbacks, BankPay transaction-flow callbacks). Advisory: kept as the order's client signal, never moves the status. `clientEventId` makes it idempotent: the same relay again answers 200 with `duplicate: true`; the same id with other content is 409. A `client` token may only relay for the order it was minted for (403 otherwise).\n\nRoles: `ingest`, `client`.",
            "tags": [
              "ingestion"
            ],
            "x-roles": [
              "ingest",
              "client"
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/ClientEvent"
                  }
                }
              }
            },
            "responses": {
              "201": {
                "description": "Recorded.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/EventReceipt"
                    }
                  }
                }
              },
              "200": {
                "description": "Already recorded (`duplicate: true`); nothing appended.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/EventReceipt"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "413": {
                "$ref": "#/components/responses/PayloadTooLarge"
              },
              "503": {
                "$ref": "#/components/responses/Unavailable"
              }
            }
          }
        },
        "/v1/enrollments/{ref}/client-events": {
          "parameters": [
            {
              "$ref": "#/components/parameters/EnrollmentRef"
            }
          ],
          "post": {
            "operationId": "relayEnrollmentClientEvent",
            "summary": "Relay a BankPay enrollment callback",
            "description": "A BankPay enrollment-flow callback (`bankAccountAdded`, `close`, `error`), kept in the enrollment's own stream with a small read model. `provider` must be `bankpay`. Idempotent by `clientEventId` like order client events. A `client` token must be one minted for this enrollment (`POST /v1/enrollments/{ref}/client-tokens`); an order's client token is 403 here.\n\nRoles: `ingest`, `client`.",
            "tags": [
              "ingestion"
            ],
            "x-roles": [
              "ingest",
              "client"
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/ClientEvent"
                  }
                }
              }
            },
            "responses": {
              "201": {
                "description": "Recorded.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/EventReceipt"
                    }
                  }
                }
              },
              "200": {
                "description": "Already recorded (`duplicate: true`); nothing appended.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/EventReceipt"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "413": {
                "$ref": "#/components/responses/PayloadTooLarge"
              },
              "503": {
                "$ref": "#/components/responses/Unavailable"
              }
            }
          }
        },
        "/v1/orders/{no}/client-tokens": {
          "parameters": [
            {
              "$ref": "#/components/parameters/OrderNo"
            }
          ],
          "post": {
            "operationId": "createClientToken",
            "summary": "Mint a client token for an order",
            "description": "A short-lived bearer token with the `client` role, scoped to this one order, for the app to relay SDK callbacks. Valid for one hour unless `ttlSeconds` says less. The body may be omitted.\n\nRoles: `ingest`.",
            "tags": [
              "ingestion"
            ],
            "x-roles": [
              "ingest"
            ],
            "requestBody": {
              "required": false,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/ClientTokenRequest"
                  }
                }
              }
            },
            "responses": {
              "201": {
                "description": "Minted.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/ClientToken"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "413": {
                "$ref": "#/components/responses/PayloadTooLarge"
              },
              "503": {
                "$ref": "#/components/responses/Unavailable"
              }
            }
          }
        },
        "/v1/enrollments/{ref}/client-tokens": {
          "parameters": [
            {
              "$ref": "#/components/parameters/EnrollmentRef"
            }
          ],
          "post": {
            "operationId": "createEnrollmentClientToken",
            "summary": "Mint a client token for an enrollment",
            "description": "Beyond http-api.md: a short-lived bearer token with the `client` role, scoped to this one BankPay enrollment, for the app to relay its enrollment callbacks (`POST /v1/enrollments/{ref}/client-events`) and nothing else. The enrollment need not exist yet: its first callback starts it. An order's client token does not reach enrollments. Valid for one hour unless `ttlSeconds` says less. The body may be omitted.\n\nRoles: `ingest`.",
            "tags": [
              "ingestion"
            ],
            "x-roles": [
              "ingest"
            ],
            "requestBody": {
              "required": false,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/ClientTokenRequest"
                  }
                }
              }
            },
            "responses": {
              "201": {
                "description": "Minted.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/ClientToken"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "413": {
                "$ref": "#/components/responses/PayloadTooLarge"
              },
              "503": {
                "$ref": "#/components/responses/Unavailable"
              }
            }
          }
        },
        "/v1/orders/{no}/corrections": {
          "parameters": [
            {
              "$ref": "#/components/parameters/OrderNo"
            },
            {
              "$ref": "#/components/parameters/IdempotencyKey"
            }
          ],
          "post": {
            "operationId": "recordCorrection",
            "summary": "Enter an operator correction",
            "description": "Appends an authoritative `operator` observation with the auditor's token name as actor and the given reason. Like every observation it follows the lifecycle rules (paid is sticky; a later non-paid status is a conflict). With a `correctionId` (or an `Idempotency-Key` header), a retry answers 200 with `duplicate: true`, and the same id with other content is 409. Without either, the same correction (provider, status, reason, auditor) sent again while it is still the order's newest event is a replay and answers 200 with `duplicate: true`; sent after other events it is a new correction.\n\nRoles: `auditor`.",
            "tags": [
              "audit"
            ],
            "x-roles": [
              "auditor"
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "$ref": "#/components/schemas/Correction"
                  }
                }
              }
            },
            "responses": {
              "201": {
                "description": "Recorded.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/OrderEventReceipt"
                    }
                  }
                }
              },
              "200": {
                "description": "Already recorded (`duplicate: true`); nothing appended.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/OrderEventReceipt"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "404": {
                "$ref": "#/components/responses/NotFound"
              },
              "409": {
                "$ref": "#/components/responses/Conflict"
              },
              "413": {
                "$ref": "#/components/responses/PayloadTooLarge"
              },
              "503": {
                "$ref": "#/components/responses/Unavailable"
              }
            }
          }
        },
        "/v1/ledger/head": {
          "get": {
            "operationId": "getLedgerHead",
            "summary": "Read the ledger head",
            "description": "The position and hash-chain value of the newest event, for checking the chain independently (`ledger verify`).\n\nRoles: `auditor`.",
            "tags": [
              "audit"
            ],
            "x-roles": [
              "auditor"
            ],
            "responses": {
              "200": {
                "description": "The head.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/LedgerHead"
                    }
                  }
                }
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "503": {
                "$ref": "#/components/responses/Unavailable"
              }
            }
          }
        },
        "/v1/exports/orders": {
          "get": {
            "operationId": "exportOrders",
            "summary": "Export paid orders for a period",
            "description": "One row per order whose first paid observation was recorded in the period. Columns, in order: `merchant_order_no, provider, provider_order_id, status, status_name, asset, expected_amount, paid_amount, fiat_currency, fiat_amount, tx_hash, created_at, paid_at, late_payment, attention, refunded, last_position` (row shape: `ExportOrderRow`). Streamed (chunked) from PostgreSQL; the same bytes as `ledger export` for the same period, so a closed period exports identically every time. Times are RFC 3339 UTC with `Z`; amounts are exact decimal strings as the provider gave them (never altered); booleans `true`/`false`. In CSV a text cell beginning with `= + - @`, tab or CR gets a leading `'`.\n\nRoles: `accountant`, `auditor`.\n\nThe rows come from one snapshot taken once the appends in flight have committed; an order's row is the order as it stood at `to`. At most two exports run at once (503 with `Retry-After` beyond). The manifest (`FILE.manifest.json`) is written by `ledger export`; over HTTP the body is the rows alone. If the database fails mid-body the connection is closed before the final chunk, so a truncated body cannot pass for a whole one.",
            "tags": [
              "exports"
            ],
            "x-roles": [
              "accountant",
              "auditor"
            ],
            "parameters": [
              {
                "name": "from",
                "in": "query",
                "required": true,
                "description": "Start of the half-open UTC interval (inclusive), on the ledger's recording time: a date (meaning 00:00 UTC) or an RFC 3339 time.",
                "schema": {
                  "type": "string",
                  "anyOf": [
                    {
                      "format": "date-time"
                    },
                    {
                      "format": "date"
                    }
                  ]
                },
                "example": "2026-11-01"
              },
              {
                "name": "to",
                "in": "query",
                "required": true,
                "description": "End of the half-open UTC interval (exclusive): a date (meaning 00:00 UTC) or an RFC 3339 time.",
                "schema": {
                  "type": "string",
                  "anyOf": [
                    {
                      "format": "date-time"
                    },
                    {
                      "format": "date"
                    }
                  ]
                },
                "example": "2026-12-01"
              },
              {
                "name": "format",
                "in": "query",
                "description": "`csv` (RFC 4180, header row, CRLF) or `jsonl` (one JSON object a line).",
                "schema": {
                  "type": "string",
                  "enum": [
                    "csv",
                    "jsonl"
                  ],
                  "default": "csv"
                }
              }
            ],
            "responses": {
              "200": {
                "description": "The rows, streamed.",
                "content": {
                  "text/csv": {
                    "schema": {
                      "type": "string"
                    },
                    "example": "merchant_order_no,provider,provider_order_id,status,status_name,asset,expected_amount,paid_amount,fiat_currency,fiat_amount,tx_hash,created_at,paid_at,late_payment,attention,refunded,last_position\r\n"
                  },
                  "application/x-ndjson": {
                    "schema": {
                      "type": "string",
                      "description": "One JSON object (`ExportOrderRow`) a line."
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "503": {
                "$ref": "#/components/responses/Unavailable"
              }
            }
          }
        },
        "/v1/exports/events": {
          "get": {
            "operationId": "exportEvents",
            "summary": "Export the events recorded in a period",
            "description": "One row per event recorded in the period, in ledger order (refunds appear as their own rows). Columns, in order: `position, recorded_at, observed_at, stream, merchant_order_no, type, source, provider, provider_status, status_after, amount, asset, tx_hash, event_id, hash` (row shape: `ExportEventRow`). Streamed (chunked) from PostgreSQL; the same bytes as `ledger export` for the same period, so a closed period exports identically every time. Times are RFC 3339 UTC with `Z`; amounts are exact decimal strings as the provider gave them (never altered); booleans `true`/`false`. In CSV a text cell beginning with `= + - @`, tab or CR gets a leading `'`.\n\nRoles: `accountant`, `auditor`.\n\nThe rows come from one snapshot taken once the appends in flight have committed; an order's row is the order as it stood at `to`. At most two exports run at once (503 with `Retry-After` beyond). The manifest (`FILE.manifest.json`) is written by `ledger export`; over HTTP the body is the rows alone. If the database fails mid-body the connection is closed before the final chunk, so a truncated body cannot pass for a whole one.",
            "tags": [
              "exports"
            ],
            "x-roles": [
              "accountant",
              "auditor"
            ],
            "parameters": [
              {
                "name": "from",
                "in": "query",
                "required": true,
                "description": "Start of the half-open UTC interval (inclusive), on the ledger's recording time: a date (meaning 00:00 UTC) or an RFC 3339 time.",
                "schema": {
                  "type": "string",
                  "anyOf": [
                    {
                      "format": "date-time"
                    },
                    {
                      "format": "date"
                    }
                  ]
                },
                "example": "2026-11-01"
              },
              {
                "name": "to",
                "in": "query",
                "required": true,
                "description": "End of the half-open UTC interval (exclusive): a date (meaning 00:00 UTC) or an RFC 3339 time.",
                "schema": {
                  "type": "string",
                  "anyOf": [
                    {
                      "format": "date-time"
                    },
                    {
                      "format": "date"
                    }
                  ]
                },
                "example": "2026-12-01"
              },
              {
                "name": "format",
                "in": "query",
                "description": "`csv` (RFC 4180, header row, CRLF) or `jsonl` (one JSON object a line).",
                "schema": {
                  "type": "string",
                  "enum": [
                    "csv",
                    "jsonl"
                  ],
                  "default": "csv"
                }
              }
            ],
            "responses": {
              "200": {
                "description": "The rows, streamed.",
                "content": {
                  "text/csv": {
                    "schema": {
                      "type": "string"
                    },
                    "example": "position,recorded_at,observed_at,stream,merchant_order_no,type,source,provider,provider_status,status_after,amount,asset,tx_hash,event_id,hash\r\n"
                  },
                  "application/x-ndjson": {
                    "schema": {
                      "type": "string",
                      "description": "One JSON object (`ExportEventRow`) a line."
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              },
              "503": {
                "$ref": "#/components/responses/Unavailable"
              }
            }
          }
        },
        "/healthz": {
          "get": {
            "operationId": "getHealth",
            "summary": "Liveness",
            "description": "200 while the process is up; does not touch the database.\n\nNo bearer token.",
            "tags": [
              "operations"
            ],
            "x-roles": [],
            "security": [],
            "responses": {
              "200": {
                "description": "The process is up.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Health"
                    },
                    "example": {
                      "status": "ok"
                    }
                  }
                }
              }
            }
          }
        },
        "/readyz": {
          "get": {
            "operationId": "getReadiness",
            "summary": "Readiness",
            "description": "200 when the database is reachable and the migrations are current; 503 with `Retry-After` otherwise.\n\nNo bearer token.",
            "tags": [
              "operations"
            ],
            "x-roles": [],
            "security": [],
            "responses": {
              "200": {
                "description": "Ready.",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Health"
                    },
                    "example": {
                      "status": "ready"
                    }
                  }
                }
              },
              "503": {
                "$ref": "#/components/responses/Unavailable"
              }
            }
          }
        },
        "/metrics": {
          "get": {
            "operationId": "getMetrics",
            "summary": "Prometheus metrics",
            "description": "Prometheus text exposition format: requests by route and status, a latency histogram, events appended, duplicates, rejected deliveries by reason (`ledger_rejected_deliveries_total{reason}`), database pool use.\n\nNo bearer token.",
            "tags": [
              "operations"
            ],
            "x-roles": [],
            "security": [],
            "responses": {
              "200": {
                "description": "The metrics.",
                "content": {
                  "text/plain": {
                    "schema": {
                      "type": "string"
                    },
                    "example": "# TYPE ledger_rejected_deliveries_total counter\nledger_rejected_deliveries_total{reason=\"bad_signature\"} 2\n"
                  }
                }
              }
            }
          }
        },
        "/openapi.json": {
          "get": {
            "operationId": "getOpenAPIDocument",
            "summary": "This OpenAPI description",
            "description": "The OpenAPI 3.1 description of the HTTP API (this document).\n\nNo bearer token.",
            "tags": [
              "operations"
            ],
            "x-roles": [],
            "security": [],
            "responses": {
              "200": {
                "description": "The document.",
                "content": {
                  "application/json": {
                    "schema": {
                      "type": "object"
                    }
                  }
                }
              }
            }
          }
        }
      },
      "components": {
        "securitySchemes": {
          "bearer": {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "opaque",
            "description": "A ledger token (`ledger token create --role ROLE --name NAME`, or minted by `POST /v1/orders/{no}/client-tokens` for the `client` role). Each token carries one role: ingest, support, auditor, accountant or client. Missing or unknown: 401; wrong role or wrong order: 403."
          },
          "web3Signature": {
            "type": "apiKey",
            "in": "header",
            "name": "X-Pay-Signature",
            "description": "Documentation only (the webhook operation declares `security: []` and the headers as parameters): `X-Pay-Timestamp` is Unix seconds (or milliseconds when 13 digits); `X-Pay-Signature` is lowercase hex HMAC-SHA256 with key = the merchant API key as UTF-8 bytes and message = the timestamp string followed directly by the raw body bytes. Compared in constant time against every configured key (rotation); timestamps outside the tolerance (default 300 s either way) are rejected."
          },
          "banxaSignature": {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "Documentation only (the webhook operation declares `security: []` and the header as a parameter): `Authorization: Bearer API_KEY:SIGNATURE:NONCE`, SIGNATURE = lowercase hex HMAC-SHA256 with key = the API secret and message = `POST\\n` + `/v1/webhooks/banxa` + `\\n` + NONCE + `\\n` + raw body. NONCE is a Unix time in milliseconds or microseconds; nonces outside the tolerance are rejected."
          }
        },
        "schemas": {
          "Decimal": {
            "type": "string",
            "pattern": "^[+-]?[0-9]+(\\.[0-9]+)?$",
            "maxLength": 64,
            "description": "An exact decimal number as a string, kept exactly as given (`\"40\"`, `\"40.00\"`, `\"0.015\"`). Never a JSON number, never an exponent form. Compared by value: `\"40\"` equals `\"40.00\"`.",
            "examples": [
              "40",
              "0.015"
            ]
          },
          "Amount": {
            "type": "string",
            "pattern": "^\\+?[0-9]+(\\.[0-9]+)?$",
            "maxLength": 64,
            "description": "A non-negative exact decimal number as a string (at most 64 characters, no exponent). In a request to the ledger a JSON number is refused (400): a client's number may already have passed through a float. Providers' bodies (webhooks, query responses) may carry numbers; they are read as given.",
            "examples": [
              "40",
              "0.015",
              "125.50"
            ]
          },
          "MerchantOrderNo": {
            "type": "string",
            "pattern": "^[A-Za-z0-9._:-]{1,64}$",
            "not": {
              "enum": [
                ".",
                ".."
              ]
            },
            "minLength": 1,
            "maxLength": 64,
            "description": "The merchant's order number: 1-64 characters of `A-Z a-z 0-9 . _ : -`, and neither `.` nor `..` (clients that normalise URLs remove those path segments). Always a JSON string, never a number. The order's identity and idempotency key.",
            "examples": [
              "ORD-2026-000123"
            ]
          },
          "Provider": {
            "type": "string",
            "pattern": "^[A-Za-z0-9._-]{1,64}$",
            "description": "A payment product's name: 1-64 characters of letters, digits, `.`, `_` or `-`, stored lowercased. `web3`, `banxa` and `bankpay` have adapters; any other name is accepted for query observations that give the canonical status directly.",
            "examples": [
              "web3",
              "banxa",
              "bankpay"
            ]
          },
          "StatusCode": {
            "type": "integer",
            "minimum": 1,
            "maximum": 6,
            "description": "The lifecycle status: 1 awaiting_payment, 2 confirming, 3 paid, 4 completed, 5 expired, 6 manual_review. Paid means 3 or 4 (never `>= 3`: 5 and 6 are not paid)."
          },
          "StatusName": {
            "type": "string",
            "enum": [
              "awaiting_payment",
              "confirming",
              "paid",
              "completed",
              "expired",
              "manual_review"
            ],
            "description": "The status code's name."
          },
          "LastClientSignal": {
            "type": "object",
            "description": "The newest SDK callback relayed for the order (advisory: it never moves the status). Shows support staff what the customer saw.",
            "required": [
              "position",
              "provider",
              "callback",
              "payload",
              "clientEventId",
              "observedAt"
            ],
            "properties": {
              "position": {
                "type": "integer",
                "format": "int64",
                "description": "Ledger position of the client event."
              },
              "provider": {
                "$ref": "#/components/schemas/Provider"
              },
              "callback": {
                "type": "string",
                "description": "The SDK callback's canonical name.",
                "examples": [
                  "banxaDidCompleteCheckout"
                ]
              },
              "payload": {
                "description": "The callback's data as relayed (shape checked per SDK); emails masked for support and ingest."
              },
              "clientEventId": {
                "type": "string",
                "description": "The app's UUID for the relay (lowercased).",
                "format": "uuid"
              },
              "occurredAt": {
                "type": "string",
                "format": "date-time",
                "description": "When the app says the callback fired (absent when not given)."
              },
              "observedAt": {
                "type": "string",
                "format": "date-time",
                "description": "occurredAt, or when the ledger received the relay."
              }
            }
          },
          "OrderConflict": {
            "type": "object",
            "description": "Something the lifecycle records rather than repairs. `status_conflict`: an authoritative non-paid observation newer than the first paid one. `amount_mismatch`: a paid observation whose amount differs from the expected amount (exact decimal comparison).",
            "required": [
              "position",
              "kind",
              "observedAt"
            ],
            "properties": {
              "position": {
                "type": "integer",
                "format": "int64",
                "description": "Ledger position of the conflicting event."
              },
              "kind": {
                "type": "string",
                "enum": [
                  "status_conflict",
                  "amount_mismatch"
                ]
              },
              "status": {
                "allOf": [
                  {
                    "$ref": "#/components/schemas/StatusCode"
                  }
                ],
                "description": "For a status conflict: the status observed."
              },
              "statusName": {
                "allOf": [
                  {
                    "$ref": "#/components/schemas/StatusName"
                  }
                ],
                "description": "For a status conflict: the observed status's name."
              },
              "observedAt": {
                "type": "string",
                "format": "date-time",
                "description": "When the conflicting observation was made."
              },
              "expected": {
                "allOf": [
                  {
                    "$ref": "#/components/schemas/Decimal"
                  }
                ],
                "description": "For an amount mismatch: the expected amount."
              },
              "observed": {
                "allOf": [
                  {
                    "$ref": "#/components/schemas/Decimal"
                  }
                ],
                "description": "For an amount mismatch: the amount observed."
              },
              "asset": {
                "type": "string",
                "description": "For an amount mismatch: the asset compared."
              }
            }
          },
          "RegisteredOrder": {
            "description": "The answer to POST /v1/orders: the order, and whether the registration was a replay.",
            "allOf": [
              {
                "$ref": "#/components/schemas/Order"
              },
              {
                "type": "object",
                "required": [
                  "duplicate"
                ],
                "properties": {
                  "duplicate": {
                    "type": "boolean",
                    "description": "True when the same content was registered before (200)."
                  }
                }
              }
            ]
          },
          "Order": {
            "type": "object",
            "description": "The order read model (lifecycle.md). Every field is always present; unknown values are `null`.",
            "required": [
              "merchantOrderNo",
              "provider",
              "status",
              "statusName",
              "paid",
              "attention",
              "latePayment",
              "refunded",
              "refundAmount",
              "refundAsset",
              "refundedAt",
              "expectedAmount",
              "paidAmount",
              "asset",
              "fiatCurrency",
              "fiatAmount",
              "externalCustomerId",
              "providerOrderId",
              "txHash",
              "createdAt",
              "updatedAt",
              "paidAt",
              "lastClientSignal",
              "conflicts",
              "eventCount",
              "lastPosition"
            ],
            "properties": {
              "merchantOrderNo": {
                "$ref": "#/components/schemas/MerchantOrderNo"
              },
              "provider": {
                "type": [
                  "string",
                  "null"
                ],
                "pattern": "^[A-Za-z0-9._-]{1,64}$",
                "description": "The provider from the registration, else from the order's first event."
              },
              "status": {
                "$ref": "#/components/schemas/StatusCode"
              },
              "statusName": {
                "$ref": "#/components/schemas/StatusName"
              },
              "paid": {
                "type": "boolean",
                "description": "True exactly when status is 3 or 4. Sticky: nothing moves an order out of paid."
              },
              "attention": {
                "type": "boolean",
                "description": "True when the order has conflicts (a status conflict or an amount mismatch) for a human to look at."
              },
              "latePayment": {
                "type": "boolean",
                "description": "True when a payment was observed after an expiry (a 5 older than the first 3/4)."
              },
              "refunded": {
                "type": "boolean",
                "description": "True when a provider refund was recorded (an adjustment; the status stays paid)."
              },
              "refundAmount": {
                "type": [
                  "string",
                  "null"
                ],
                "pattern": "^[+-]?[0-9]+(\\.[0-9]+)?$",
                "maxLength": 64,
                "description": "The refunded amount, when the refund carried one."
              },
              "refundAsset": {
                "type": [
                  "string",
                  "null"
                ],
                "description": "The refund's asset or currency."
              },
              "refundedAt": {
                "type": [
                  "string",
                  "null"
                ],
                "format": "date-time",
                "description": "When the refund was observed."
              },
              "expectedAmount": {
                "type": [
                  "string",
                  "null"
                ],
                "pattern": "^[+-]?[0-9]+(\\.[0-9]+)?$",
                "maxLength": 64,
                "description": "The amount registered by the merchant backend (null for an order known only from provider events)."
              },
              "paidAmount": {
                "type": [
                  "string",
                  "null"
                ],
                "pattern": "^[+-]?[0-9]+(\\.[0-9]+)?$",
                "maxLength": 64,
                "description": "The amount of the paid observation, exactly as the provider gave it."
              },
              "asset": {
                "type": [
                  "string",
                  "null"
                ],
                "description": "The expected amount's asset (token or crypto coin)."
              },
              "fiatCurrency": {
                "type": [
                  "string",
                  "null"
                ],
                "description": "Fiat currency (Banxa on-ramp orders)."
              },
              "fiatAmount": {
                "type": [
                  "string",
                  "null"
                ],
                "pattern": "^[+-]?[0-9]+(\\.[0-9]+)?$",
                "maxLength": 64,
                "description": "Fiat amount (Banxa on-ramp orders)."
              },
              "externalCustomerId": {
                "type": [
                  "string",
                  "null"
                ],
                "description": "The merchant's customer reference. E-mail addresses are masked for `support` and `ingest` callers; `auditor` sees it unmasked."
              },
              "providerOrderId": {
                "type": [
                  "string",
                  "null"
                ],
                "description": "The provider's own order id (web3 `orderNo`, Banxa `order_id`)."
              },
              "txHash": {
                "type": [
                  "string",
                  "null"
                ],
                "description": "The on-chain transaction hash, when a provider reported one."
              },
              "createdAt": {
                "type": [
                  "string",
                  "null"
                ],
                "format": "date-time",
                "description": "When the order was registered, else the earliest observation."
              },
              "updatedAt": {
                "type": [
                  "string",
                  "null"
                ],
                "format": "date-time",
                "description": "When the ledger recorded the order's newest event."
              },
              "paidAt": {
                "type": [
                  "string",
                  "null"
                ],
                "format": "date-time",
                "description": "When the first paid observation was made; null when not paid."
              },
              "lastClientSignal": {
                "anyOf": [
                  {
                    "$ref": "#/components/schemas/LastClientSignal"
                  },
                  {
                    "type": "null"
                  }
                ],
                "description": "The newest SDK callback relayed for the order, or null."
              },
              "conflicts": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/OrderConflict"
                },
                "description": "Conflicts recorded by the lifecycle; empty when none."
              },
              "eventCount": {
                "type": "integer",
                "minimum": 0,
                "description": "Number of distinct events in the order's stream."
              },
              "lastPosition": {
                "type": [
                  "integer",
                  "null"
                ],
                "format": "int64",
                "description": "Ledger position of the order's newest event."
              }
            },
            "examples": [
              {
                "merchantOrderNo": "ORD-2026-000123",
                "provider": "web3",
                "status": 3,
                "statusName": "paid",
                "paid": true,
                "attention": false,
                "latePayment": false,
                "refunded": false,
                "refundAmount": null,
                "refundAsset": null,
                "refundedAt": null,
                "expectedAmount": "40",
                "paidAmount": "40",
                "asset": "USDT",
                "fiatCurrency": null,
                "fiatAmount": null,
                "externalCustomerId": "j***@example.com",
                "providerOrderId": "PAY202611010001",
                "txHash": "0x5f2c9e0d6b7a1c3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e",
                "createdAt": "2026-11-01T12:00:00Z",
                "updatedAt": "2026-11-01T12:03:10Z",
                "paidAt": "2026-11-01T12:03:09Z",
                "lastClientSignal": null,
                "conflicts": [],
                "eventCount": 3,
                "lastPosition": 1042
              }
            ]
          },
          "OrderList": {
            "type": "object",
            "required": [
              "orders",
              "nextCursor"
            ],
            "properties": {
              "orders": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/Order"
                },
                "description": "Newest update first."
              },
              "nextCursor": {
                "type": [
                  "string",
                  "null"
                ],
                "description": "Opaque cursor for the next page (pass as `cursor`), or null on the last page."
              }
            }
          },
          "OrderRegistration": {
            "type": "object",
            "description": "An order the merchant backend created with a provider. `merchantOrderNo` is the idempotency key: the same content again answers 200, different content 409.",
            "required": [
              "merchantOrderNo",
              "provider",
              "amount",
              "asset"
            ],
            "properties": {
              "merchantOrderNo": {
                "$ref": "#/components/schemas/MerchantOrderNo"
              },
              "provider": {
                "$ref": "#/components/schemas/Provider"
              },
              "amount": {
                "allOf": [
                  {
                    "$ref": "#/components/schemas/Amount"
                  }
                ],
                "description": "The expected amount, in token units for web3 (compared by value with paid observations)."
              },
              "asset": {
                "type": "string",
                "description": "The amount's asset (token symbol, crypto coin).",
                "minLength": 1,
                "maxLength": 64,
                "examples": [
                  "USDT"
                ]
              },
              "chainId": {
                "type": "string",
                "description": "web3 chain id, as a string (`\"56\"`; a JSON number is refused).",
                "examples": [
                  "56"
                ]
              },
              "tokenId": {
                "type": "string",
                "description": "web3 token id, as a string (a JSON number is refused)."
              },
              "fiatCurrency": {
                "type": "string",
                "description": "Fiat currency code (Banxa).",
                "maxLength": 16,
                "examples": [
                  "USD"
                ]
              },
              "fiatAmount": {
                "allOf": [
                  {
                    "$ref": "#/components/schemas/Amount"
                  }
                ],
                "description": "Fiat amount (Banxa)."
              },
              "externalCustomerId": {
                "type": "string",
                "description": "The merchant's customer reference (often an e-mail; masked for support).",
                "maxLength": 256
              },
              "providerOrderId": {
                "type": "string",
                "description": "The provider's order id, as a string; for web3 it defaults to `providerResponse.orderNo` (which the gateway may send as a number)."
              },
              "providerResponse": {
                "type": "object",
                "description": "The provider's order-creation response, kept whole (web3 `createOrder`: `{code, orderNo, payAddress, payAmountDisplay, payAmountMinimal, chainKey, msg}`)."
              }
            },
            "examples": [
              {
                "merchantOrderNo": "ORD-2026-000123",
                "provider": "web3",
                "amount": "40",
                "asset": "USDT",
                "chainId": "56",
                "tokenId": "1",
                "externalCustomerId": "jane@example.com",
                "providerResponse": {
                  "code": 0,
                  "orderNo": "PAY202611010001",
                  "payAddress": "0xabc",
                  "payAmountDisplay": "40",
                  "payAmountMinimal": "40000000000000000000",
                  "chainKey": "bsc",
                  "msg": "ok"
                }
              }
            ]
          },
          "Observation": {
            "type": "object",
            "description": "A provider query result the merchant backend fetched. `web3` and `banxa` responses are mapped by their adapters (a Banxa `refunded` records an adjustment); for any other provider the response must carry the canonical `status` (1-6), and may carry `providerStatus` (or `statusText`), `amount`, `asset`, `fiatAmount`, `fiatCurrency`, `txHash`, `providerOrderId` (or `orderNo`). The response is kept whole.",
            "required": [
              "provider",
              "response"
            ],
            "properties": {
              "provider": {
                "$ref": "#/components/schemas/Provider"
              },
              "response": {
                "type": "object",
                "description": "The raw provider response (web3 `queryOrder`: `{code, status, statusText, txHash, ...}`; Banxa order, bare or as `{data: {order: {...}}}`)."
              },
              "observedAt": {
                "type": "string",
                "format": "date-time",
                "description": "When the backend fetched the response; defaults to the provider's own time where the response has one, else the time received."
              }
            },
            "examples": [
              {
                "provider": "web3",
                "response": {
                  "code": 0,
                  "status": 3,
                  "statusText": "paid",
                  "txHash": "0x5f2c"
                },
                "observedAt": "2026-11-01T12:03:09Z"
              }
            ]
          },
          "CallbackName": {
            "type": "string",
            "enum": [
              "banxaDidCompleteCheckout",
              "banxaDidFail",
              "banxaDidDismiss",
              "bankAccountAdded",
              "acceptedTransactionIntentServiceFee",
              "close",
              "error",
              "onSuccess",
              "onError",
              "enrollmentError"
            ],
            "description": "The SDK callback's name. Banxa: `banxaDidCompleteCheckout`, `banxaDidFail`, `banxaDidDismiss`. BankPay: `bankAccountAdded` (enrollment flow only), `acceptedTransactionIntentServiceFee` (transaction flow only), `close`, `error`; BankPay's raw callback names `onSuccess` (resolved by the dictionary's `type`), `onError` and `enrollmentError` (meaning `error`) are accepted and stored under the canonical name."
          },
          "ClientEvent": {
            "type": "object",
            "description": "An SDK callback relayed from an app. Advisory: it never moves an order's status. `clientEventId` makes the relay idempotent.",
            "required": [
              "provider",
              "callback",
              "clientEventId"
            ],
            "properties": {
              "provider": {
                "$ref": "#/components/schemas/Provider"
              },
              "callback": {
                "$ref": "#/components/schemas/CallbackName"
              },
              "payload": {
                "description": "The callback's data as the SDK gave it. Banxa `banxaDidCompleteCheckout`: BanxaCheckoutResult `{paymentId?, orderId?, status?, rawQuery?}` (strings); `banxaDidFail`: the APIError case as `{error: CASE, ...}` (`invalidURL`, `serverError` with `code`, `unauthorized`, `decodingFailed` with `message`, `networkUnavailable`, `missingCredentials` with `fields`, `sdkNotConfigured`, `checkoutFailed` with `rawQuery?`, `unknown` with `message`); `banxaDidDismiss`: none. BankPay: the callback dictionary, e.g. `{type: \"bankAccountAdded\", data: {intent_id}}`, `{type: \"acceptedTransactionIntentServiceFee\", data: {transactionIntentId}}`, `{type: \"close\"}`, `{error: \"declined\", message, errors}`. The fields named here are checked; any other member the app sends (an error's `localizedDescription`, an `email`) is kept in the stored payload as sent, shown with e-mail addresses masked to everyone but auditors."
              },
              "clientEventId": {
                "type": "string",
                "description": "A UUID chosen by the app; the relay's idempotency key.",
                "format": "uuid",
                "pattern": "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$"
              },
              "occurredAt": {
                "type": "string",
                "format": "date-time",
                "description": "When the callback fired on the device."
              },
              "sdkVersion": {
                "type": "string",
                "description": "The SDK's version.",
                "maxLength": 64
              }
            },
            "examples": [
              {
                "provider": "banxa",
                "callback": "banxaDidCompleteCheckout",
                "payload": {
                  "paymentId": "p-1",
                  "orderId": "b-77",
                  "status": "complete"
                },
                "clientEventId": "0b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d",
                "occurredAt": "2026-11-01T12:02:00Z",
                "sdkVersion": "2.3.0"
              }
            ]
          },
          "ClientTokenRequest": {
            "type": "object",
            "properties": {
              "ttlSeconds": {
                "type": "integer",
                "minimum": 1,
                "maximum": 3600,
                "default": 3600,
                "description": "Lifetime in seconds; one hour when absent."
              }
            }
          },
          "ClientToken": {
            "type": "object",
            "required": [
              "token",
              "expiresAt"
            ],
            "properties": {
              "token": {
                "type": "string",
                "description": "A bearer token with the `client` role, scoped to the one order or enrollment it was minted for. Shown once; stored hashed."
              },
              "expiresAt": {
                "type": "string",
                "format": "date-time",
                "description": "When the token stops working."
              }
            }
          },
          "Correction": {
            "type": "object",
            "description": "An operator observation entered by an auditor; authoritative like a provider observation. The auditor's token name is recorded as the actor.",
            "required": [
              "status",
              "reason"
            ],
            "properties": {
              "status": {
                "$ref": "#/components/schemas/StatusCode"
              },
              "reason": {
                "type": "string",
                "description": "Why the correction is made (kept in the ledger).",
                "minLength": 1,
                "maxLength": 2000
              },
              "correctionId": {
                "type": "string",
                "description": "Optional UUID that makes retries of the same correction idempotent (200 duplicate).",
                "format": "uuid",
                "pattern": "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$"
              },
              "provider": {
                "allOf": [
                  {
                    "$ref": "#/components/schemas/Provider"
                  }
                ],
                "description": "The provider the correction concerns; `operator` when absent."
              }
            },
            "examples": [
              {
                "status": 4,
                "reason": "Settlement confirmed by the provider's support, ticket 8812.",
                "correctionId": "5d1e3f6a-2b4c-4d8e-9f0a-1b2c3d4e5f60"
              }
            ]
          },
          "EventReceipt": {
            "type": "object",
            "required": [
              "eventId",
              "position",
              "duplicate"
            ],
            "properties": {
              "eventId": {
                "type": "string",
                "description": "The event's id (for a duplicate, the original event's).",
                "format": "uuid"
              },
              "position": {
                "type": "integer",
                "format": "int64",
                "description": "The event's ledger position (for a duplicate, the original's)."
              },
              "duplicate": {
                "type": "boolean",
                "description": "True when the same content was stored before: nothing new was appended."
              }
            }
          },
          "OrderEventReceipt": {
            "allOf": [
              {
                "$ref": "#/components/schemas/EventReceipt"
              },
              {
                "type": "object",
                "properties": {
                  "order": {
                    "allOf": [
                      {
                        "$ref": "#/components/schemas/Order"
                      }
                    ],
                    "description": "The order's state after the event (e-mail addresses masked except for auditors)."
                  }
                }
              }
            ]
          },
          "TimelineEvent": {
            "type": "object",
            "description": "One event of an order's timeline.",
            "required": [
              "position",
              "eventId",
              "type",
              "source",
              "provider",
              "recordedAt",
              "observedAt",
              "verified",
              "payload",
              "statusAfter",
              "redeliveries"
            ],
            "properties": {
              "position": {
                "type": "integer",
                "format": "int64",
                "description": "Global ledger position."
              },
              "eventId": {
                "type": "string",
                "description": "The event's id.",
                "format": "uuid"
              },
              "type": {
                "type": "string",
                "enum": [
                  "OrderRegistered",
                  "StatusObserved",
                  "ClientSignal",
                  "AdjustmentRecorded",
                  "EnrollmentSignal"
                ],
                "description": "The event type."
              },
              "source": {
                "type": "string",
                "enum": [
                  "webhook",
                  "query",
                  "operator",
                  "client",
                  "system"
                ],
                "description": "Where the event came from. `webhook`, `query` and `operator` are authoritative; `client` is advisory and never moves the status."
              },
              "provider": {
                "type": "string",
                "description": "The provider the event concerns."
              },
              "recordedAt": {
                "type": "string",
                "format": "date-time",
                "description": "When the ledger committed the event."
              },
              "observedAt": {
                "type": "string",
                "format": "date-time",
                "description": "The provider's own time where the input had one (webhook timestamp, Banxa status_date, query time), else when received."
              },
              "verified": {
                "type": "boolean",
                "description": "True when the input was authenticated by a provider signature (a verified webhook); false for inputs reported with a bearer token (see `verifiedBy`)."
              },
              "verifiedBy": {
                "type": [
                  "string",
                  "null"
                ],
                "description": "How the input was authenticated: `signature` (provider webhook signature) or `token:NAME` (the bearer token's name).",
                "examples": [
                  "signature",
                  "token:merchant-backend"
                ]
              },
              "payload": {
                "type": "object",
                "description": "The parsed form of the input, unknown provider fields included. E-mail addresses are masked for `support`."
              },
              "statusAfter": {
                "allOf": [
                  {
                    "$ref": "#/components/schemas/StatusCode"
                  }
                ],
                "description": "The order's status after this event (by ledger position)."
              },
              "raw": {
                "type": [
                  "string",
                  "null"
                ],
                "contentEncoding": "base64",
                "description": "The bytes as received, base64. Only present for `auditor` callers, so a signature can be re-verified; null when the event had no raw body."
              },
              "metadata": {
                "type": "object",
                "description": "Only for `auditor` callers: the event's metadata (request id, verification verdict, signing key id, and for a provider body with parts jsonb cannot hold, `leftOut`: `[{path, reason}]`, what its parsed form lacks; the raw body has it)."
              },
              "hash": {
                "type": "string",
                "pattern": "^[0-9a-f]{64}$",
                "description": "Only for `auditor` callers: the event's hash-chain value, lowercase hex."
              },
              "redeliveries": {
                "type": "integer",
                "minimum": 0,
                "description": "How many exact redeliveries of this event were answered as duplicates."
              }
            }
          },
          "Timeline": {
            "type": "object",
            "required": [
              "merchantOrderNo",
              "events"
            ],
            "properties": {
              "merchantOrderNo": {
                "$ref": "#/components/schemas/MerchantOrderNo"
              },
              "events": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/TimelineEvent"
                },
                "description": "Oldest first (by ledger position)."
              }
            }
          },
          "LedgerHead": {
            "type": "object",
            "required": [
              "position",
              "hash"
            ],
            "properties": {
              "position": {
                "type": "integer",
                "format": "int64",
                "minimum": 0,
                "description": "Position of the newest event."
              },
              "hash": {
                "type": "string",
                "pattern": "^[0-9a-f]{64}$",
                "description": "The newest event's hash-chain value (SHA-256), lowercase hex."
              }
            }
          },
          "WebhookAck": {
            "type": "object",
            "required": [
              "code",
              "eventId",
              "duplicate"
            ],
            "properties": {
              "code": {
                "type": "integer",
                "const": 0,
                "description": "0: stored."
              },
              "eventId": {
                "type": "string",
                "description": "The stored event's id (the original's for a redelivery).",
                "format": "uuid"
              },
              "position": {
                "type": "integer",
                "format": "int64",
                "description": "The event's ledger position (the original's for a redelivery)."
              },
              "duplicate": {
                "type": "boolean",
                "description": "True for a redelivery of content already stored (even with a new timestamp)."
              }
            },
            "examples": [
              {
                "code": 0,
                "eventId": "7c9e6679-7425-40de-944b-e07fc1f90ae7",
                "position": 1042,
                "duplicate": false
              }
            ]
          },
          "Web3Webhook": {
            "type": "object",
            "description": "The web3 gateway's callback body. Unknown fields are kept. The signature covers the raw bytes, so send them unchanged.",
            "required": [
              "merchantOrderNo",
              "status"
            ],
            "properties": {
              "merchantOrderNo": {
                "$ref": "#/components/schemas/MerchantOrderNo"
              },
              "status": {
                "type": [
                  "integer",
                  "string"
                ],
                "minimum": 1,
                "maximum": 6,
                "pattern": "^[1-6]$",
                "description": "The canonical status 1-6 (a digit string is accepted). Only 3 and 4 mean paid."
              },
              "orderNo": {
                "type": [
                  "string",
                  "integer"
                ],
                "description": "The gateway's order number."
              },
              "statusText": {
                "type": "string"
              },
              "txHash": {
                "type": "string"
              },
              "payAmountMinimal": {
                "allOf": [
                  {
                    "$ref": "#/components/schemas/Amount"
                  }
                ],
                "description": "Amount in the token's minimal units."
              },
              "payAmountDisplay": {
                "allOf": [
                  {
                    "$ref": "#/components/schemas/Amount"
                  }
                ],
                "description": "Amount in token units."
              },
              "amount": {
                "allOf": [
                  {
                    "$ref": "#/components/schemas/Amount"
                  }
                ],
                "description": "Amount in token units."
              },
              "chainKey": {
                "type": "string"
              },
              "chainId": {
                "type": [
                  "string",
                  "integer"
                ]
              },
              "tokenId": {
                "type": [
                  "string",
                  "integer"
                ]
              }
            },
            "examples": [
              {
                "merchantOrderNo": "ORD-2026-000123",
                "orderNo": "PAY202611010001",
                "status": 3,
                "statusText": "paid",
                "txHash": "0x5f2c",
                "payAmountMinimal": "40000000000000000000",
                "payAmountDisplay": "40",
                "amount": "40",
                "chainKey": "bsc",
                "chainId": 56,
                "tokenId": 1
              }
            ]
          },
          "BanxaWebhook": {
            "type": "object",
            "description": "Banxa's order webhook (v2). `external_id` is the merchant's order number. Status mapping: pendingPayment 1; waitingPayment, inProgress 2; paymentReceived, cryptoTransferred, coinTransferred 3; complete 4; expired, cancelled, declined 5; extraVerification 6; refunded records an adjustment (the order stays paid). Unknown fields are kept.",
            "required": [
              "external_id",
              "status"
            ],
            "properties": {
              "order_id": {
                "type": [
                  "string",
                  "integer"
                ],
                "description": "Banxa's order id."
              },
              "status": {
                "type": "string",
                "examples": [
                  "paymentReceived",
                  "complete",
                  "refunded"
                ]
              },
              "status_date": {
                "type": "string",
                "description": "When the status changed; loose forms accepted (`2024-01-31 12:48:36`, with or without `T`, no zone: read as UTC). Becomes observedAt; the raw string is kept."
              },
              "created_at": {
                "type": "string"
              },
              "updated_at": {
                "type": "string"
              },
              "external_id": {
                "$ref": "#/components/schemas/MerchantOrderNo"
              },
              "order_type": {
                "type": "string"
              },
              "crypto_coin": {
                "type": "string"
              },
              "crypto_blockchain": {
                "type": "string"
              },
              "crypto_amount": {
                "type": [
                  "string",
                  "number"
                ],
                "description": "Crypto amount; kept as the exact text given."
              },
              "fiat_currency": {
                "type": "string"
              },
              "fiat_amount": {
                "type": [
                  "string",
                  "number"
                ],
                "description": "Fiat amount; kept as the exact text given."
              },
              "payment_method": {
                "type": "string"
              },
              "processing_fee": {
                "type": [
                  "string",
                  "number"
                ]
              },
              "network_fee": {
                "type": [
                  "string",
                  "number"
                ]
              },
              "transaction_hash": {
                "type": [
                  "string",
                  "null"
                ]
              },
              "metadata": {}
            },
            "examples": [
              {
                "order_id": "b-77",
                "status": "complete",
                "status_date": "2026-11-01 12:03:09",
                "created_at": "2026-11-01 12:00:00",
                "updated_at": "2026-11-01 12:03:09",
                "external_id": "ORD-2026-000124",
                "order_type": "CRYPTO-BUY",
                "crypto_coin": "USDT",
                "crypto_blockchain": "TRON",
                "crypto_amount": "99.5",
                "fiat_currency": "USD",
                "fiat_amount": "100",
                "payment_method": "card",
                "processing_fee": "0.5",
                "network_fee": "0",
                "transaction_hash": "a1b2c3",
                "metadata": {}
              }
            ]
          },
          "Problem": {
            "type": "object",
            "description": "RFC 9457 problem details, served as `application/problem+json`.",
            "required": [
              "type",
              "title",
              "status"
            ],
            "properties": {
              "type": {
                "type": "string",
                "format": "uri-reference",
                "default": "about:blank",
                "description": "A URI reference naming the problem type: `about:blank`, or `urn:ledger:problem:REASON` for a rejected input (REASON is a stable label such as `invalid_json`, `invalid_amount`, `bad_signature`)."
              },
              "title": {
                "type": "string",
                "description": "A short, human-readable summary of the problem type."
              },
              "status": {
                "type": "integer",
                "minimum": 400,
                "maximum": 599,
                "description": "The HTTP status code."
              },
              "detail": {
                "type": "string",
                "description": "What went wrong with this request, in words a caller can act on."
              },
              "instance": {
                "type": "string",
                "format": "uri-reference"
              }
            },
            "examples": [
              {
                "type": "about:blank",
                "title": "Invalid request",
                "status": 400,
                "detail": "The amount \"4O\" is not a plain decimal number such as 40 or 0.015."
              }
            ]
          },
          "Health": {
            "type": "object",
            "description": "A small status document.",
            "properties": {
              "status": {
                "type": "string",
                "examples": [
                  "ok",
                  "ready"
                ]
              }
            }
          },
          "ExportOrderRow": {
            "type": "object",
            "description": "One row of `GET /v1/exports/orders`: an order whose first paid observation was recorded in the period. In CSV the keys are the header row, in this order.",
            "properties": {
              "merchant_order_no": {
                "type": "string"
              },
              "provider": {
                "type": [
                  "string",
                  "null"
                ]
              },
              "provider_order_id": {
                "type": [
                  "string",
                  "null"
                ]
              },
              "status": {
                "$ref": "#/components/schemas/StatusCode"
              },
              "status_name": {
                "$ref": "#/components/schemas/StatusName"
              },
              "asset": {
                "type": [
                  "string",
                  "null"
                ]
              },
              "expected_amount": {
                "type": [
                  "string",
                  "null"
                ],
                "pattern": "^[+-]?[0-9]+(\\.[0-9]+)?$",
                "maxLength": 64,
                "description": "Exact decimal."
              },
              "paid_amount": {
                "type": [
                  "string",
                  "null"
                ],
                "pattern": "^[+-]?[0-9]+(\\.[0-9]+)?$",
                "maxLength": 64,
                "description": "Exact decimal."
              },
              "fiat_currency": {
                "type": [
                  "string",
                  "null"
                ]
              },
              "fiat_amount": {
                "type": [
                  "string",
                  "null"
                ],
                "pattern": "^[+-]?[0-9]+(\\.[0-9]+)?$",
                "maxLength": 64,
                "description": "Exact decimal."
              },
              "tx_hash": {
                "type": [
                  "string",
                  "null"
                ]
              },
              "created_at": {
                "type": [
                  "string",
                  "null"
                ],
                "format": "date-time",
                "description": "RFC 3339 UTC."
              },
              "paid_at": {
                "type": [
                  "string",
                  "null"
                ],
                "format": "date-time",
                "description": "RFC 3339 UTC."
              },
              "late_payment": {
                "type": "boolean"
              },
              "attention": {
                "type": "boolean"
              },
              "refunded": {
                "type": "boolean"
              },
              "last_position": {
                "type": [
                  "integer",
                  "null"
                ],
                "format": "int64"
              }
            }
          },
          "ExportEventRow": {
            "type": "object",
            "description": "One row of `GET /v1/exports/events`: an event recorded in the period, in ledger order. In CSV the keys are the header row, in this order.",
            "properties": {
              "position": {
                "type": "integer",
                "format": "int64"
              },
              "recorded_at": {
                "type": "string",
                "format": "date-time",
                "description": "RFC 3339 UTC."
              },
              "observed_at": {
                "type": "string",
                "format": "date-time",
                "description": "RFC 3339 UTC."
              },
              "stream": {
                "type": "string"
              },
              "merchant_order_no": {
                "type": [
                  "string",
                  "null"
                ]
              },
              "type": {
                "type": "string",
                "enum": [
                  "OrderRegistered",
                  "StatusObserved",
                  "ClientSignal",
                  "AdjustmentRecorded",
                  "EnrollmentSignal"
                ]
              },
              "source": {
                "type": "string",
                "enum": [
                  "webhook",
                  "query",
                  "operator",
                  "client",
                  "system"
                ]
              },
              "provider": {
                "type": [
                  "string",
                  "null"
                ]
              },
              "provider_status": {
                "type": [
                  "string",
                  "null"
                ]
              },
              "status_after": {
                "type": [
                  "integer",
                  "null"
                ],
                "minimum": 1,
                "maximum": 6
              },
              "amount": {
                "type": [
                  "string",
                  "null"
                ],
                "pattern": "^[+-]?[0-9]+(\\.[0-9]+)?$",
                "maxLength": 64,
                "description": "Exact decimal, as the provider gave it."
              },
              "asset": {
                "type": [
                  "string",
                  "null"
                ]
              },
              "tx_hash": {
                "type": [
                  "string",
                  "null"
                ]
              },
              "event_id": {
                "type": "string",
                "format": "uuid"
              },
              "hash": {
                "type": "string",
                "pattern": "^[0-9a-f]{64}$",
                "description": "Hash-chain value, lowercase hex."
              }
            }
          }
        },
        "parameters": {
          "IdempotencyKey": {
            "name": "Idempotency-Key",
            "in": "header",
            "required": false,
            "description": "Makes a retry of this write a duplicate (200, `duplicate: true`) rather than a new event: for an observation without `observedAt` (otherwise keyed by its arrival time), or a correction without `correctionId`. 1-128 visible ASCII characters, else 400. Scoped to the order.",
            "schema": {
              "type": "string",
              "minLength": 1,
              "maxLength": 128
            },
            "example": "poll-2026-11-30T07:00:00Z"
          },
          "OrderNo": {
            "name": "no",
            "in": "path",
            "required": true,
            "description": "The merchantOrderNo.",
            "schema": {
              "type": "string",
              "pattern": "^[A-Za-z0-9._:-]{1,64}$",
              "not": {
                "enum": [
                  ".",
                  ".."
                ]
              },
              "minLength": 1,
              "maxLength": 64
            },
            "example": "ORD-2026-000123"
          },
          "EnrollmentRef": {
            "name": "ref",
            "in": "path",
            "required": true,
            "description": "The merchant's BankPay enrollment reference (same alphabet as a merchantOrderNo).",
            "schema": {
              "type": "string",
              "pattern": "^[A-Za-z0-9._:-]{1,64}$",
              "not": {
                "enum": [
                  ".",
                  ".."
                ]
              },
              "minLength": 1,
              "maxLength": 64
            },
            "example": "ENR-2026-0042"
          },
          "Web3Timestamp": {
            "name": "X-Pay-Timestamp",
            "in": "header",
            "required": true,
            "description": "Unix time of the delivery in seconds (or milliseconds when 13 digits). Must be within the tolerance (`LEDGER_SIGNATURE_TOLERANCE`, default 300 s either way); becomes the event's observedAt.",
            "schema": {
              "type": "string",
              "pattern": "^[0-9]{1,13}$"
            },
            "example": "1793534589"
          },
          "Web3Signature": {
            "name": "X-Pay-Signature",
            "in": "header",
            "required": true,
            "description": "Lowercase hex HMAC-SHA256, key = the merchant API key (UTF-8), message = the X-Pay-Timestamp string followed directly by the raw body bytes. Any configured key verifies (rotation).",
            "schema": {
              "type": "string",
              "pattern": "^[0-9a-f]{64}$"
            }
          },
          "BanxaAuthorization": {
            "name": "Authorization",
            "in": "header",
            "required": true,
            "description": "`Bearer API_KEY:SIGNATURE:NONCE`. SIGNATURE = lowercase hex HMAC-SHA256, key = the API secret, message = `POST\\n/v1/webhooks/banxa\\n` + NONCE + `\\n` + raw body. NONCE is a Unix time in milliseconds or microseconds and must be within the tolerance. (This is not a ledger bearer token; it is declared here because the route has no security requirement.)",
            "schema": {
              "type": "string",
              "pattern": "^Bearer [^:]+:[0-9a-f]{64}:[0-9]+$"
            }
          }
        },
        "responses": {
          "BadRequest": {
            "description": "The request is malformed: the body is not UTF-8 JSON, a field is missing or invalid, a path or query parameter is invalid, or the request has a smuggling shape (the connection is then closed).",
            "content": {
              "application/problem+json": {
                "schema": {
                  "$ref": "#/components/schemas/Problem"
                }
              }
            }
          },
          "Unauthorized": {
            "description": "Missing or unknown bearer token (or, for webhooks, a bad, missing or stale signature; the delivery is quarantined).",
            "content": {
              "application/problem+json": {
                "schema": {
                  "$ref": "#/components/schemas/Problem"
                }
              }
            }
          },
          "Forbidden": {
            "description": "A known token whose role may not call this route, or a client token for another order.",
            "content": {
              "application/problem+json": {
                "schema": {
                  "$ref": "#/components/schemas/Problem"
                }
              }
            }
          },
          "NotFound": {
            "description": "No such order (or enrollment).",
            "content": {
              "application/problem+json": {
                "schema": {
                  "$ref": "#/components/schemas/Problem"
                }
              }
            }
          },
          "Conflict": {
            "description": "The idempotency key exists with different content (for `POST /v1/orders`: that merchantOrderNo was registered with other content). Nothing was appended.",
            "content": {
              "application/problem+json": {
                "schema": {
                  "$ref": "#/components/schemas/Problem"
                }
              }
            }
          },
          "PayloadTooLarge": {
            "description": "The body is over `LEDGER_MAX_BODY` (default 1 MiB).",
            "content": {
              "application/problem+json": {
                "schema": {
                  "$ref": "#/components/schemas/Problem"
                }
              }
            }
          },
          "Unavailable": {
            "description": "The database cannot be reached (or, for `/readyz`, migrations are not current). Nothing was committed; retry after the given delay.",
            "content": {
              "application/problem+json": {
                "schema": {
                  "$ref": "#/components/schemas/Problem"
                }
              }
            },
            "headers": {
              "Retry-After": {
                "description": "Seconds to wait before retrying.",
                "required": true,
                "schema": {
                  "type": "integer",
                  "minimum": 0
                }
              }
            }
          }
        }
      }
    }
    """#
}
