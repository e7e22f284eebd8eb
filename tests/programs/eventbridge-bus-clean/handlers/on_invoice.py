def handler(event, context):
    detail = event["detail"]
    print(f"invoice {detail['invoiceId']} issued for {detail['amount']}")
