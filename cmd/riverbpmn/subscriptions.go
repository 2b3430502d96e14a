package main

// events subscription NAME: one named event subscription, its saved
// position and how far behind it is (events subscriptions, the list, is in
// lists.go).

import (
	"context"
	"io"

	"github.com/riverbpmn/riverbpmn/events"
)

func runSubscription(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("events subscription")
	positionals, err := v.parse(args, "NAME")
	if err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	sub, err := engine.Events().Subscription(ctx, positionals[0])
	if err != nil {
		return err
	}
	return v.print(stdout, sub, func(w io.Writer) error {
		return subscriptionsList.printText(w, listOutput[events.Subscription]{Items: []events.Subscription{*sub}}, page{})
	})
}
