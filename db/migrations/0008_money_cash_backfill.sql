-- Cash on delivery: what existed before collected_by was the merchant's own collection (today's model, kept).
UPDATE merchant_order SET collected_by = 'merchant' WHERE payment_destination = 'cash' AND collected_by IS NULL;
--> statement-breakpoint
UPDATE merchant_wallet_entry SET collected_by = 'merchant' WHERE payment_destination = 'cash' AND collected_by IS NULL;
--> statement-breakpoint
-- Driver settlements before cash netting paid their whole amount.
UPDATE driver_settlement SET payout_amount = amount WHERE cash_netted = 0 AND payout_amount = 0;
--> statement-breakpoint
-- One meaning per entry type: an express trip's delivery fee was split into delivery_fee_debit (the driver's share) and
-- platform_commission (the rest); a delivery_fee_debit is now the whole delivery fee in every flow and platform_commission
-- only the commission on a sale. Each express trip's two rows become one delivery_fee_debit of their sum (the merchant's
-- balance, debt and available are unchanged: both rows were charges without a payment destination).
UPDATE merchant_wallet_entry f
   SET amount = f.amount + c.amount,
       note = COALESCE(f.note, '') || ' [merged with the express platform_commission ' || c.id || ']'
  FROM merchant_wallet_entry c
 WHERE f.entry_type = 'delivery_fee_debit' AND f.order_id IS NULL AND f.trip_id IS NOT NULL
   AND c.entry_type = 'platform_commission' AND c.order_id IS NULL AND c.organization_id = f.organization_id AND c.trip_id = f.trip_id;
--> statement-breakpoint
DELETE FROM merchant_wallet_entry c
 USING merchant_wallet_entry f
 WHERE c.entry_type = 'platform_commission' AND c.order_id IS NULL AND c.trip_id IS NOT NULL
   AND f.entry_type = 'delivery_fee_debit' AND f.order_id IS NULL AND f.organization_id = c.organization_id AND f.trip_id = c.trip_id;
--> statement-breakpoint
-- An express trip whose driver earned nothing had only the platform_commission row: it is the delivery fee.
UPDATE merchant_wallet_entry SET entry_type = 'delivery_fee_debit'
 WHERE entry_type = 'platform_commission' AND order_id IS NULL AND trip_id IS NOT NULL;
